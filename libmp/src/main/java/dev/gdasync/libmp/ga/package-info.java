/**
 * Global arrays over libmp's one-sided windows (Global Arrays and CoGA, seed 004): a {@link
 * dev.gdasync.libmp.ga.GlobalArray} is created once by every rank, distributed over the ranks by a {@link
 * dev.gdasync.libmp.ga.Distribution}, and read or written by index patches: the caller's own block by memory copy,
 * every other owner's part by puts and gets into that owner's window. {@link dev.gdasync.libmp.ga.GlobalArrays} is the
 * per-rank runtime (staging memory, non-blocking handles, fences, short messages). See {@code docs/garray.md}.
 */
package dev.gdasync.libmp.ga;
