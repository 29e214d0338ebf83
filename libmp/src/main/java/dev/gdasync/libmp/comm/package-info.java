/**
 * The comm layer that HPGMG- and CoMD-style applications call: the ready handshake on the CPU, on a stream or in a
 * kernel, automatic registration, datatypes.
 *
 * <p>Layer: above {@link dev.gdasync.libmp.Mp}, which it may call with gdsync's {@code memop} and {@code stream}.
 */
package dev.gdasync.libmp.comm;
