package dev.gdasync.gdsync.trace;

/**
 * Loads and initializes gdsync's event classes ahead of the hot paths. The first use of an event class loads it and
 * registers it with the flight recorder, which takes far longer than a doorbell's grace: a queue pair whose first
 * ring paid that between its doorbell stores and its call would see the NIC's agent take the ring, and the request
 * would run on the agent instead of inline. Providers and executors call {@link #preload()} from their class
 * initializers, where the cost is paid once and off every path that is timed.
 */
public final class TraceEvents {
    private static final boolean LOADED = load();

    private TraceEvents() {
    }

    private static boolean load() {
        // Creating one of each initializes it; uncommitted, nothing is recorded.
        new MemopBatchEvent();
        new StreamWaitEvent();
        new HostTaskEvent();
        new DoorbellRungEvent();
        new DoorbellNoticedEvent();
        new WorkRequestEvent();
        new CompletionWrittenEvent();
        new CompletionReapedEvent();
        new RnrRetryEvent();
        new FailureEvent();
        return true;
    }

    /** @return true once every gdsync event class is loaded and initialized (the first call does it) */
    public static boolean preload() {
        return LOADED;
    }
}
