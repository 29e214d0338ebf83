/**
 * The applications and benchmarks: the ping-pong in every model, the gdsync-layer ping-pong, GPU memop latencies,
 * JMH micro-benchmarks, and the timeline tool (scripts/trace). Exports nothing: they run by name under {@code scripts/mprun}.
 */
module dev.gdasync.apps {
    requires dev.gdasync.libmp;
    requires dev.gdasync.ki;
    requires static mpj;
    requires info.picocli;
    requires jmh.core;
    requires HdrHistogram;
    requires java.desktop;
    requires org.jfree.jfreechart;
    requires jdk.jfr;
    requires jdk.management;
    requires com.fasterxml.jackson.core;

    // The launcher starts applications by class name; picocli reads their options and JMH instantiates its
    // generated benchmarks reflectively.
    opens dev.gdasync.apps.bench;
    opens dev.gdasync.apps.comd;
    opens dev.gdasync.apps.pingpong;
    opens dev.gdasync.apps.gdsyncpingpong;
    opens dev.gdasync.apps.gpulatency;
    opens dev.gdasync.apps.hello;
    opens dev.gdasync.apps.hpgmg;
    opens dev.gdasync.apps.jmh;
    opens dev.gdasync.apps.trace;
    opens dev.gdasync.apps.spmv;
    opens dev.gdasync.apps.gabench;
    opens dev.gdasync.apps.jacobi2d;
    opens dev.gdasync.apps.shmembench;
    opens dev.gdasync.apps.spts;
    opens dev.gdasync.apps.collectives;
    opens dev.gdasync.apps.nbc;
    opens dev.gdasync.apps.mpjsuite;
}
