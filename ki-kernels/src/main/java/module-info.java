/**
 * ki-kernels: the KI executors (the host KI executor, and the GPU's over the fused-kernel images built from
 * {@code src/main/cuda}). Calls native code through FFM and JCuda: run it with
 * {@code --enable-native-access=dev.gdasync.gdsync,dev.gdasync.ki} on the module path.
 */
module dev.gdasync.ki {
    requires transitive dev.gdasync.gdsync;

    exports dev.gdasync.ki;
    exports dev.gdasync.ki.cuda;
    exports dev.gdasync.ki.exec;
    exports dev.gdasync.ki.kernels;
    exports dev.gdasync.ki.msccl;
    exports dev.gdasync.ki.shmem;
    exports dev.gdasync.ki.trace;
}
