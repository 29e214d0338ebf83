package dev.gdasync.gdsync.descriptor;

import dev.gdasync.gdsync.memop.BarrierScope;
import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.SendExecutor;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Turns descriptor lists into memop batches (LibGDSync's {@code gds_stream_post_descriptors} and
 * {@code gds_post_descriptors}).
 *
 * <p>Posting is all or nothing: every send in the list is checked against its queue pair's prepare
 * order, and every wait against being posted twice, before any is marked posted, so a rejected list
 * changes nothing.
 */
public final class Descriptors {
    /** The executor identity of work run at once on the calling CPU thread ({@link SendExecutor#CPU}). */
    public static final SendExecutor CPU = SendExecutor.CPU;

    private Descriptors() {
    }

    /**
     * Translates descriptors into one batch, without posting them.
     *
     * @param descriptors the descriptors, in order
     * @return their memops, in order
     * @throws NullPointerException if the list or one of its descriptors is null
     */
    public static MemopBatch translate(List<? extends Descriptor> descriptors) {
        requireDescriptors(descriptors);
        MemopBatch.Builder ops = MemopBatch.builder(descriptors.size() * 2);
        for (int i = 0, n = descriptors.size(); i < n; i++) {
            switch (descriptors.get(i)) {
                case Descriptor.Send s -> ops.addAll(s.request().memops());
                case Descriptor.Wait w -> ops.addAll(w.request().memops());
                case Descriptor.WaitValue32 w -> ops.add(new Memop.Wait32(w.word(), w.value(), w.condition(),
                        (w.flags() & DescriptorFlags.WAIT_POST_FLUSH) != 0, w.progress()));
                case Descriptor.WriteValue32 w -> ops.add(new Memop.Write32(w.word(), w.value(),
                        (w.flags() & DescriptorFlags.WRITE_PRE_BARRIER) != 0));
                case Descriptor.WriteMemory w -> {
                    ops.add(new Memop.WriteMemory(w.target(), w.offset(), w.data(),
                            (w.flags() & DescriptorFlags.WRITE_MEMORY_PRE_BARRIER) != 0));
                    if ((w.flags() & DescriptorFlags.WRITE_MEMORY_POST_BARRIER) != 0) {
                        ops.add(new Memop.Barrier(BarrierScope.SYSTEM));
                    }
                }
            }
        }
        return ops.build();
    }

    /**
     * Checks, marks posted and translates descriptors for an executor.
     *
     * @param descriptors the descriptors, in order
     * @param executor    who will execute the batch (a stream; {@link #CPU} for the calling thread)
     * @return the batch to execute
     * @throws NullPointerException  if the list, one of its descriptors or the executor is null
     * @throws IllegalStateException if a send is out of prepare order or already posted, or a wait is
     *                               posted twice; nothing is marked posted then
     */
    public static MemopBatch post(List<? extends Descriptor> descriptors, SendExecutor executor) {
        checkPost(descriptors, executor);
        MemopBatch batch = translate(descriptors);
        markPosted(descriptors, executor);
        return batch;
    }

    /**
     * Checks, without changing anything, that descriptors may be posted to an executor: each send is
     * next in its queue pair's prepare order (counting sends ahead of it in the list), and no wait is
     * posted twice. An executor that may still refuse the batch checks first, queues the batch, then
     * calls {@link #markPosted}.
     *
     * @param descriptors the descriptors, in order
     * @param executor    who will execute them
     * @throws NullPointerException  if the list, one of its descriptors or the executor is null
     * @throws IllegalStateException if an order rule would be broken
     */
    public static void checkPost(List<? extends Descriptor> descriptors, SendExecutor executor) {
        requireDescriptors(descriptors);
        Objects.requireNonNull(executor, "executor must not be null");
        int n = descriptors.size();
        if (n > SCAN_LIMIT) {
            checkLong(descriptors, executor);
        } else {
            // Short lists, the common case, are checked by scanning: no maps on the posting path.
            for (int i = 0; i < n; i++) {
                Descriptor d = descriptors.get(i);
                if (d instanceof Descriptor.Send s) {
                    s.request().checkPost(earlierSends(descriptors, i, s.request().queuePair()), executor);
                } else if (d instanceof Descriptor.Wait w) {
                    w.request().checkPost();
                    for (int j = 0; j < i; j++) {
                        if (descriptors.get(j) instanceof Descriptor.Wait v && v.request() == w.request()) {
                            throw duplicateWait(w);
                        }
                    }
                }
            }
        }
    }

    /**
     * Records that an executor took descriptors checked by {@link #checkPost}.
     *
     * @param descriptors the descriptors
     * @param executor    who took them
     * @throws NullPointerException if the list, one of its descriptors or the executor is null; nothing is marked
     */
    public static void markPosted(List<? extends Descriptor> descriptors, SendExecutor executor) {
        requireDescriptors(descriptors);
        Objects.requireNonNull(executor, "executor must not be null");
        for (int i = 0, n = descriptors.size(); i < n; i++) {
            Descriptor d = descriptors.get(i);
            if (d instanceof Descriptor.Send s) {
                s.request().markPosted(executor);
            } else if (d instanceof Descriptor.Wait w) {
                w.request().markPosted();
            }
        }
    }

    private static final int SCAN_LIMIT = 16;

    /** Refuses a null list or a null element, naming it, before anything is looked at or changed. */
    private static void requireDescriptors(List<? extends Descriptor> descriptors) {
        Objects.requireNonNull(descriptors, "descriptors must not be null");
        for (int i = 0, n = descriptors.size(); i < n; i++) {
            if (descriptors.get(i) == null) {
                throw new NullPointerException("descriptors[" + i + "] must not be null");
            }
        }
    }

    private static int earlierSends(List<? extends Descriptor> descriptors, int end, QueuePair qp) {
        int n = 0;
        for (int j = 0; j < end; j++) {
            if (descriptors.get(j) instanceof Descriptor.Send s && s.request().queuePair() == qp) {
                n++;
            }
        }
        return n;
    }

    private static void checkLong(List<? extends Descriptor> descriptors, SendExecutor executor) {
        Map<QueuePair, Integer> earlier = new IdentityHashMap<>();
        Map<Object, Boolean> waits = new IdentityHashMap<>();
        for (Descriptor d : descriptors) {
            if (d instanceof Descriptor.Send s) {
                QueuePair qp = s.request().queuePair();
                int n = earlier.getOrDefault(qp, 0);
                s.request().checkPost(n, executor);
                earlier.put(qp, n + 1);
            } else if (d instanceof Descriptor.Wait w) {
                w.request().checkPost();
                if (waits.put(w.request(), Boolean.TRUE) != null) {
                    throw duplicateWait(w);
                }
            }
        }
    }

    private static IllegalStateException duplicateWait(Descriptor.Wait w) {
        return new IllegalStateException("the wait for CQE #" + w.request().index() + " of "
                + w.request().completionQueue().name() + " appears twice in one list");
    }

    /**
     * Posts descriptors and executes them at once on the calling thread (LibGDSync's
     * {@code gds_post_descriptors}).
     *
     * @param descriptors the descriptors
     * @param policy      how waits wait
     * @throws NullPointerException if the list, one of its descriptors or the policy is null; nothing is posted
     * @throws dev.gdasync.gdsync.memop.WaitTimeoutException if a wait times out
     */
    public static void postOnCpu(List<? extends Descriptor> descriptors, WaitPolicy policy) {
        Objects.requireNonNull(policy, "policy must not be null");
        HostMemops.execute(post(descriptors, CPU), policy);
    }

}
