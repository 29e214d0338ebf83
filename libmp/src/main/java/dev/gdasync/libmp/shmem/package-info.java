/**
 * An OpenSHMEM-style API over libmp (seed 000, GPU Initiated OpenSHMEM): {@link dev.gdasync.libmp.shmem.Shmem} is one
 * PE's runtime: a symmetric heap (the same offsets on every PE), puts and gets into other PEs' heaps through one
 * {@link dev.gdasync.libmp.MpWindow}, atomics, {@code fence}, {@code quiet}, barriers and waits on local words. See
 * {@code docs/shmem.md}.
 */
package dev.gdasync.libmp.shmem;
