/**
 * MPJ Express's own test suite over gdasync ({@code scripts/mpj-suite}): the cases of its {@code TestSuite},
 * compiled unmodified from Debian's source tarball, run by {@link dev.gdasync.apps.mpjsuite.MpjSuiteCases} in every
 * rank, over gdasync and on MPJ's multicore device, a job at a time ({@link dev.gdasync.apps.mpjsuite.SuiteRun}).
 *
 * <p>Layer: an application of libmp's MPJ device.
 */
package dev.gdasync.apps.mpjsuite;
