/**
 * CoMD 1.1 in Java on libmp: the molecular dynamics proxy application (Lennard-Jones or EAM copper, link cells,
 * velocity Verlet, spatial decomposition) with its six-face halo exchange and atom redistribution in four
 * communication models: MPJ Express, libmp on the CPU, a host stream (SA) and a fused kernel on the host KI executor
 * (KI). Calls libmp's public API, ki-kernels' executor API and MPJ Express (mpj mode only).
 */
package dev.gdasync.apps.comd;
