/**
 * The collective proxy daemon, a tool beside the launcher: {@link dev.gdasync.libmp.proxy.CollProxy}, the process
 * {@code scripts/mprun --proxies} starts on a host to execute the ranks' offloaded collectives with its own software
 * NIC, its links to the other hosts' proxies ({@code ProxyLinks}, {@code ProxyFrames}) and its helper threads on the
 * shared-memory path ({@code ProxyAssist}). It reads the ranks' tasks from
 * {@link dev.gdasync.libmp.coll.offload.ProxyQueue}. May call gdsync's NIC model, the bootstraps and the library's
 * shared-memory channel; the library never calls it. See {@code docs/collectives.md}.
 */
package dev.gdasync.libmp.proxy;
