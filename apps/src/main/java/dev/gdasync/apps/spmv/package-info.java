/**
 * {@code scripts/mprun -np N spmv}: a CSR sparse matrix–vector product with rows split over ranks and the vectors as
 * global arrays ({@code dev.gdasync.libmp.ga}), checked against the serial product.
 */
package dev.gdasync.apps.spmv;
