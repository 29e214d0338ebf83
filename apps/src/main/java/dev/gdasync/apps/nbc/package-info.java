/**
 * {@code nbc-overlap}: OSU-style overlap of non-blocking collectives with computation, the host progress engine
 * against the offload engine (the collective proxy) side by side. Uses libmp's public API only.
 */
package dev.gdasync.apps.nbc;
