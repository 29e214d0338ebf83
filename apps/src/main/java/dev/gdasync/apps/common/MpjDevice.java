package dev.gdasync.apps.common;

import java.util.List;

/** The MPJ Express device an app runs its MPJ program on, as a child job of rank 0. */
public enum MpjDevice {
    /** The multicore device (smpdev): every rank a thread of one JVM, under MPJ's starter ({@link MpjStarter}). */
    MULTICORE("multicore device (the ranks are threads of one JVM)"),
    /** niodev: one JVM per rank, TCP over the loopback between them, started without MPJ's daemons ({@link NiodevStarter}). */
    NIODEV("niodev (one JVM per rank, TCP over the loopback)");

    private final String words;

    MpjDevice(String words) {
        this.words = words;
    }

    /** @return the device in words, for the apps' reports */
    public String describe() {
        return "MPJ Express's " + words;
    }

    /**
     * @param mpjHome the value of MPJ_HOME, or null
     * @return why the device cannot run here, or null if it can
     */
    public String missing(String mpjHome) {
        return this == MULTICORE ? MpjStarter.missing(mpjHome) : NiodevStarter.missing(mpjHome);
    }

    /**
     * @param name      the job in words, for the error messages
     * @param mpjHome   MPJ_HOME, checked ({@link #missing})
     * @param ranks     MPJ ranks
     * @param mainClass the MPJ program's main class, on this JVM's class path
     * @param args      its arguments
     * @param resultTag the first word of its result lines
     * @param errorTag  the first word of its error lines
     * @return the job on this device, ready to run
     */
    public ChildJob job(String name, String mpjHome, int ranks, String mainClass, List<String> args, String resultTag,
                        String errorTag) {
        return this == MULTICORE ? MpjStarter.job(name, mpjHome, ranks, mainClass, args, resultTag, errorTag)
                : NiodevStarter.job(name, mpjHome, ranks, mainClass, args, resultTag, errorTag);
    }
}
