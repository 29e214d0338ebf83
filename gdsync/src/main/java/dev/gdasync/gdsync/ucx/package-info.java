/**
 * The process's UCX library: loading {@code libucp} through JUCX, its one UCP context, the versions of UCX and
 * JUCX, and why UCX is unavailable when it is ({@link dev.gdasync.gdsync.ucx.UcxLibrary}). Shared by the software
 * NIC's UCX transport and by applications that measure raw JUCX beside it.
 *
 * <p>Layer: a binding; it calls only the JDK and JUCX. The UCX transport ({@code swnic.ucx}) and applications
 * call it.
 */
package dev.gdasync.gdsync.ucx;
