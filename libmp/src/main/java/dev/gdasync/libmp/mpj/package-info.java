/**
 * MPJ Express (the mpiJava 1.2 API) over gdasync: {@link dev.gdasync.libmp.mpj.GdasyncDevice} is an xdev device that
 * MPJ's own {@code mpi} and {@code mpjdev} layers run on, {@link dev.gdasync.libmp.mpj.MpjMain} installs it in a rank
 * of {@code scripts/mprun --mpj}. See docs/mpj.md.
 */
package dev.gdasync.libmp.mpj;
