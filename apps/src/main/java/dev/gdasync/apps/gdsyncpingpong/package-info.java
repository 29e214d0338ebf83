/**
 * A ping-pong one layer down, on the software NIC's own API (queue pairs, prepared sends, host streams).
 *
 * <p>Layer: an application of gdsync; it calls {@code swnic}, {@code nic}, {@code descriptor}, {@code stream} and
 * {@code memory}.
 */
package dev.gdasync.apps.gdsyncpingpong;
