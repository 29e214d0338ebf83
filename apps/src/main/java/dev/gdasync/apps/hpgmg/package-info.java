/**
 * HPGMG-FV in Java on libmp: the 4th-order finite-volume multigrid benchmark (variable-coefficient Poisson,
 * Dirichlet boundaries, GSRB smoother, BiCGStab bottom solver, one F-cycle per solve) ported from upstream
 * HPGMG-FV, with every inter-rank exchange (ghost zones, restriction, interpolation) run in one of four
 * communication models: MPJ Express ({@code mpj}), libmp on the CPU ({@code host}), on a host stream
 * ({@code sa}) and in a fused exchange kernel on the host KI executor ({@code ki}). It uses libmp's public
 * API and the KI executors only.
 */
package dev.gdasync.apps.hpgmg;
