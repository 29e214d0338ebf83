/**
 * The collective proxy: {@link dev.gdasync.libmp.coll.offload.CollProxy}, the process {@code scripts/mprun --proxies}
 * starts on a host to execute the ranks' offloaded collectives with its own software NIC, and
 * {@link dev.gdasync.libmp.coll.offload.ProxyQueue}, the shared-memory descriptor queue between the ranks and it.
 * May call gdsync's NIC model and memory; knows nothing of {@code Mp} or communicators (the ranks' side is
 * {@code dev.gdasync.libmp.coll}). See {@code docs/collectives.md}.
 */
package dev.gdasync.libmp.coll.offload;
