package dev.gdasync.libmp.ga;

import java.util.Arrays;

/**
 * A transfer plan: contiguous runs, each a byte range of one owner's block (offset past the window header) paired
 * with a byte range of the caller's buffer, grouped by owner in rank order. Neighbouring rows that are contiguous on
 * both sides are merged into one run, so a patch spanning whole rows of a block moves in one transfer.
 */
final class RunList {
    /** The longest run: one transfer carries at most this many bytes. */
    static final long MAX_RUN = 1L << 30;

    private int size;
    private int[] owner = new int[8];
    private long[] remote = new long[8];
    private long[] user = new long[8];
    private long[] bytes = new long[8];

    void add(int rank, long remoteOffset, long userOffset, long length) {
        int last = size - 1;
        if (size > 0 && owner[last] == rank && remote[last] + bytes[last] == remoteOffset
                && user[last] + bytes[last] == userOffset && bytes[last] + length <= MAX_RUN) {
            bytes[last] += length;
            return;
        }
        while (length > MAX_RUN) {
            add(rank, remoteOffset, userOffset, MAX_RUN);
            remoteOffset += MAX_RUN;
            userOffset += MAX_RUN;
            length -= MAX_RUN;
        }
        if (size == owner.length) {
            int n = size * 2;
            owner = Arrays.copyOf(owner, n);
            remote = Arrays.copyOf(remote, n);
            user = Arrays.copyOf(user, n);
            bytes = Arrays.copyOf(bytes, n);
        }
        owner[size] = rank;
        remote[size] = remoteOffset;
        user[size] = userOffset;
        bytes[size] = length;
        size++;
    }

    int size() {
        return size;
    }

    int owner(int i) {
        return owner[i];
    }

    long remote(int i) {
        return remote[i];
    }

    long user(int i) {
        return user[i];
    }

    long bytes(int i) {
        return bytes[i];
    }

    /** @return the bytes of the runs of ranks other than {@code me}, from run {@code from} to {@code to} (exclusive) */
    long remoteBytes(int me, int from, int to) {
        long n = 0;
        for (int i = from; i < to; i++) {
            if (owner[i] != me) {
                n += bytes[i];
            }
        }
        return n;
    }
}
