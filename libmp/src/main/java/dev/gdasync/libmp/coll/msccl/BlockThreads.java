package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * The host interpreter's thread blocks' threads, started once and kept for the runtime's life (starting and
 * joining a thread per block per call was one of the interpreter's main costs). Each run hands thread i its block's
 * loop and waits until every handed loop has returned. Driven by one thread.
 */
final class BlockThreads implements AutoCloseable {
    private final String prefix;
    private final List<Worker> workers = new ArrayList<>();
    private volatile boolean closed;

    /** @param prefix the threads' names start with it */
    BlockThreads(String prefix) {
        this.prefix = prefix;
    }

    /** Runs each task on a thread of its own; returns at once. */
    void start(List<Runnable> tasks) {
        while (workers.size() < tasks.size()) {
            Worker w = new Worker(prefix + workers.size());
            workers.add(w);
            w.start();
        }
        for (int i = 0; i < tasks.size(); i++) {
            Worker w = workers.get(i);
            w.task = tasks.get(i);
            LockSupport.unpark(w);
        }
    }

    /** Waits until every task handed out has returned (the tasks end themselves: a run sets their stop flag). */
    void join() {
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.SPIN_THEN_YIELD);
        for (Worker w : workers) {
            while (w.task != null) {
                idler.idle();
            }
            idler.reset();
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Worker w : workers) {
            LockSupport.unpark(w);
        }
        for (Worker w : workers) {
            try {
                w.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private final class Worker extends Thread {
        /** The task to run, null when idle (written by the runtime's thread, cleared by this one when done). */
        volatile Runnable task;

        Worker(String name) {
            super(name);
            setDaemon(true);
        }

        @Override
        public void run() {
            while (!closed) {
                Runnable t = task;
                if (t == null) {
                    LockSupport.park(this);
                    continue;
                }
                try {
                    t.run();
                } finally {
                    task = null;
                }
            }
        }
    }
}
