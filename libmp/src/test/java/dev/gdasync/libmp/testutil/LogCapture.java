package dev.gdasync.libmp.testutil;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * Holds what the code under test logs ({@code System.Logger}, which is java.util.logging here) while a test runs,
 * and prints it only when the test fails. Tests that provoke warnings on purpose (a rendezvous refusing a
 * stranger's connection) then pass quietly, and a failing test still shows everything that was logged.
 *
 * <p>Registered for every libmp test by JUnit's extension auto-detection ({@code junit-platform.properties} and
 * {@code META-INF/services/org.junit.jupiter.api.extension.Extension} in the test resources).
 */
public final class LogCapture implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(LogCapture.class);

    /** Made by JUnit. */
    public LogCapture() {
    }

    /** Collects records while a test runs. */
    private static final class Collector extends Handler {
        private final SimpleFormatter format = new SimpleFormatter();
        private final List<String> lines = new ArrayList<>();
        private final Handler[] replaced;

        Collector(Handler[] replaced) {
            this.replaced = replaced;
        }

        @Override
        public synchronized void publish(LogRecord r) {
            lines.add(format.format(r));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }

        synchronized List<String> lines() {
            return List.copyOf(lines);
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Logger root = Logger.getLogger("");
        Handler[] handlers = root.getHandlers();
        Collector collector = new Collector(handlers);
        for (Handler h : handlers) {
            root.removeHandler(h);
        }
        root.addHandler(collector);
        context.getStore(NAMESPACE).put(Collector.class, collector);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Collector collector = context.getStore(NAMESPACE).remove(Collector.class, Collector.class);
        if (collector == null) {
            return;
        }
        Logger root = Logger.getLogger("");
        root.removeHandler(collector);
        for (Handler h : collector.replaced) {
            root.addHandler(h);
        }
        List<String> lines = collector.lines();
        if (context.getExecutionException().isPresent() && !lines.isEmpty()) {
            System.err.println("logged during the failed test " + context.getDisplayName() + ":");
            lines.forEach(System.err::print);
        }
    }
}
