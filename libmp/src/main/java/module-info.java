/**
 * libmp, LibMP in Java: {@code Mp} over any NIC provider, the bootstraps, the comm layer, collectives, shmem, global
 * arrays and the MPJ device; and, above the library, its tools: the launcher ({@code launch}), the command-line layer
 * ({@code cli}) and the collective proxy daemon ({@code proxy}). The library never names a tool (an ArchUnit rule
 * checks it). It sees gdsync's NIC model only: no provider, no CUDA type.
 */
module dev.gdasync.libmp {
    requires transitive dev.gdasync.gdsync;
    // MPJ Express, for MpjBootstrap and the MPJ device (libmp.mpj): present when an application runs MPJ.
    requires static mpj;
    // The command lines of the tools (launch, cli) only: static and not transitive, so a program that uses the library
    // does not get picocli; the applications and the launcher jar bring it themselves.
    requires static info.picocli;
    // The JDK's StAX parser reads MSCCL-IR programs (coll.msccl).
    requires java.xml;

    exports dev.gdasync.libmp;
    exports dev.gdasync.libmp.bootstrap;
    exports dev.gdasync.libmp.cli;
    exports dev.gdasync.libmp.coll;
    exports dev.gdasync.libmp.coll.msccl;
    exports dev.gdasync.libmp.coll.reduce;
    exports dev.gdasync.libmp.coll.offload;
    exports dev.gdasync.libmp.comm;
    exports dev.gdasync.libmp.ga;
    exports dev.gdasync.libmp.shmem;
    exports dev.gdasync.libmp.launch;
    exports dev.gdasync.libmp.proxy;
    exports dev.gdasync.libmp.mpj;
    exports dev.gdasync.libmp.trace;

    // picocli reads the launcher's options and sets the version provider's command by reflection.
    opens dev.gdasync.libmp.launch to info.picocli;
    opens dev.gdasync.libmp.cli to info.picocli;
}
