/**
 * {@code scripts/mprun}'s launcher: starts N JVMs on this host (or in network namespaces), prefixes their output
 * with the rank, stops the others when one fails.
 *
 * <p>Layer: a tool beside libmp; it calls {@code bootstrap} and the JDK, and runs applications by name or class.
 */
package dev.gdasync.libmp.launch;
