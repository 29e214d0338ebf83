/**
 * MPJ Express (the mpiJava 1.2 API) over gdasync: {@link dev.gdasync.libmp.mpj.GdasyncDevice} is an xdev device that
 * MPJ's own {@code mpi} and {@code mpjdev} layers run on, {@link dev.gdasync.libmp.mpj.MpjMain} installs it in a rank
 * of {@code scripts/mprun --mpj}; {@link dev.gdasync.libmp.mpj.MpjOnStream} sends MPJ messages rung by a stream and
 * makes streams wait for MPJ requests (LibMP's {@code mp_isend_on_stream} and {@code mp_wait_on_stream}). See
 * docs/mpj.md.
 */
package dev.gdasync.libmp.mpj;
