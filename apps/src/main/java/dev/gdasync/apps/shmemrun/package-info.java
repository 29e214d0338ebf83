/** What the shmem applications (jacobi2d, spts, shmembench) share: parsing, checking, starting the runtime, exiting. */
package dev.gdasync.apps.shmemrun;
