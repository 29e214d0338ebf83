/**
 * gdsync, LibGDSync's layer: memory, memops, descriptors, streams, the NIC model and its providers (the software
 * NIC; mlx5 on a ConnectX NIC or the software mlx5 device), the CUDA layer and the KI descriptor table.
 *
 * <p>Exports the API packages only; the software NIC's core and transports ({@code swnic.core}, {@code swnic.shm},
 * {@code swnic.ucx}, {@code swnic.cudaipc}), the verbs bindings ({@code mlx5.verbs}) and the FFM helper stay
 * inside. The module calls native code through
 * FFM: run it with {@code --enable-native-access=dev.gdasync.gdsync} on the module path
 * ({@code ALL-UNNAMED} on the class path, as the project's scripts do).
 */
module dev.gdasync.gdsync {
    // JCuda and JUCX are plain jars: their automatic module names come from the file names.
    requires transitive jcuda;
    requires transitive jucx;
    requires transitive org.agrona;
    // The flight recorder's events (dev.gdasync.gdsync.trace) and the counters' MXBeans (docs/observability.md).
    requires transitive jdk.jfr;
    requires transitive java.management;

    exports dev.gdasync.gdsync.concurrent;
    exports dev.gdasync.gdsync.cuda;
    exports dev.gdasync.gdsync.descriptor;
    exports dev.gdasync.gdsync.gdrcopy;
    exports dev.gdasync.gdsync.ki;
    exports dev.gdasync.gdsync.memop;
    exports dev.gdasync.gdsync.memory;
    exports dev.gdasync.gdsync.mlx5;
    exports dev.gdasync.gdsync.mlx5.provider;
    exports dev.gdasync.gdsync.mlx5.soft;
    exports dev.gdasync.gdsync.nic;
    exports dev.gdasync.gdsync.stream;
    exports dev.gdasync.gdsync.swnic;
    exports dev.gdasync.gdsync.trace;
    exports dev.gdasync.gdsync.ucx;

    uses dev.gdasync.gdsync.nic.NicProvider;
    provides dev.gdasync.gdsync.nic.NicProvider with dev.gdasync.gdsync.swnic.SwNicProvider,
            dev.gdasync.gdsync.mlx5.provider.Mlx5Provider;
}
