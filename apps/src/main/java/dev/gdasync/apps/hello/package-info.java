/**
 * The smallest libmp program: every rank says hello through the bootstrap.
 *
 * <p>Layer: an application of libmp.
 */
package dev.gdasync.apps.hello;
