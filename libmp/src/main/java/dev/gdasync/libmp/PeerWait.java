package dev.gdasync.libmp;

import dev.gdasync.gdsync.concurrent.Parker;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.Nic;

import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * What an {@link Mp}'s CPU thread waits for right now (a request, several, or a word), so that its idler parks
 * through the NIC ({@link Nic#awaitPeers}): a peer that delivers wakes the thread at once, and the NIC asks, once the
 * park is announced, whether the wait is over. One per Mp, driven by its thread; the wait methods set it before they
 * loop and clear it after.
 */
final class PeerWait implements Parker, BooleanSupplier {
    private final Nic nic;
    private final PeerLink[] links;
    private final Completion completion;
    private MpRequest request;
    private List<MpRequest> requests;
    private MemoryWord word;
    private int value;
    private WaitCondition condition;

    PeerWait(Nic nic, PeerLink[] links, Completion completion) {
        this.nic = nic;
        this.links = links;
        this.completion = completion;
    }

    /** The wait is for one request. */
    void request(MpRequest r) {
        clear();
        request = r;
    }

    /** The wait is for every request of a list, or the first that fails. */
    void requests(List<MpRequest> rs) {
        clear();
        requests = rs;
    }

    /** The wait is for a word to satisfy a condition. */
    void word(MemoryWord w, int v, WaitCondition c) {
        clear();
        word = w;
        value = v;
        condition = c;
    }

    /** No wait in progress: a park asks nothing. */
    void clear() {
        request = null;
        requests = null;
        word = null;
        condition = null;
    }

    @Override
    public void park(long nanos) {
        nic.awaitPeers(nanos, this);
    }

    /** Whether the wait is over, reaping what arrived (as the wait loops do between looks). */
    @Override
    public boolean getAsBoolean() {
        MpRequest r = request;
        if (r != null) {
            if (!r.isComplete()) {
                links[r.peer()].progress(completion);
            }
            return r.isComplete();
        }
        List<MpRequest> rs = requests;
        if (rs != null) {
            boolean all = true;
            for (int k = 0, n = rs.size(); k < n; k++) {
                MpRequest q = rs.get(k);
                if (!q.isComplete()) {
                    links[q.peer()].progress(completion);
                }
                if (!q.isComplete()) {
                    all = false;
                } else if (q.status() != CompletionStatus.SUCCESS) {
                    return true;
                }
            }
            return all;
        }
        MemoryWord w = word;
        return w != null && condition.test(w.getAcquire32(), value);
    }
}
