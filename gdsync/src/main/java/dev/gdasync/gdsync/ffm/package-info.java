/**
 * The one helper of the project's FFM bindings: downcalls that rethrow what a native call throws.
 *
 * <p>Layer: the lowest; it calls only the JDK. Every package that binds a native library may call it.
 */
package dev.gdasync.gdsync.ffm;
