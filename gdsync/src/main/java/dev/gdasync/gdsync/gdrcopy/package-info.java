/**
 * GDRCopy bindings through FFM (loaded lazily): CPU mappings of GPU words, with a copying fallback when
 * GDRCopy is absent.
 *
 * <p>Layer: a binding beside {@code cuda}; it may call {@code cuda}, {@code memop} and {@code ffm}.
 */
package dev.gdasync.gdsync.gdrcopy;
