/**
 * The library's side of the collective proxy: {@link dev.gdasync.libmp.coll.offload.ProxyQueue}, the shared-memory
 * descriptor queue through which the ranks' offload engine ({@code dev.gdasync.libmp.coll}) hands collectives to the
 * host's proxy. The proxy itself is a tool, in {@code dev.gdasync.libmp.proxy}: the library names only this format,
 * never the daemon. May call gdsync's concurrency primitives; knows nothing of {@code Mp} or communicators. See
 * {@code docs/collectives.md}.
 */
package dev.gdasync.libmp.coll.offload;
