package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.libmp.coll.reduce.DataType;
import dev.gdasync.libmp.coll.reduce.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

/**
 * What a rank says it is calling, in four words that fit a connection's call line and a rank's header: the
 * collective (or the rooted built-in and its root), its layout, how it is triggered, the element type and operator,
 * the program it runs (or the built-in), the count the caller passed and the communicator. Two ranks of one
 * run must hold equal records; a receiver that finds another one in a sender's call line, or a waiting rank that
 * finds one in a peer's header, fails the call naming both. Built once per kind of call, so a run allocates none.
 *
 * @param kind    bits 0–7 the collective ({@link Collective} ordinal, {@link #REDUCE} or {@link #BROADCAST}), bit
 *                8 in place, bits 9–10 the trigger (0 blocking, 1 stream, 2 KI), bits 16–23 the type's ordinal + 1,
 *                bits 24–31 the operator's ordinal + 1, bits 32–63 the root + 1 (0: none)
 * @param program the program's index in the runtime's list + 1, or 0 for the built-in
 * @param elems   the call's count, as its caller passed it
 * @param context the communicator's context id
 */
record CallRecord(long kind, long program, long elems, long context) {
    static final int REDUCE = 4;
    static final int BROADCAST = 5;
    static final int BLOCKING = 0;
    static final int STREAM = 1;
    static final int KI = 2;

    /**
     * @param collective a {@link Collective} ordinal, {@link #REDUCE} or {@link #BROADCAST}
     * @param inPlace    the layout
     * @param trigger    {@link #BLOCKING}, {@link #STREAM} or {@link #KI}
     * @param root       the root, or -1
     * @return the {@link #kind} word of such a call
     */
    static long kind(int collective, boolean inPlace, int trigger, DataType type, ReduceOp op, int root) {
        return collective | (inPlace ? 1L << 8 : 0) | ((long) trigger << 9) | ((long) (type.ordinal() + 1) << 16)
                | ((long) (op.ordinal() + 1) << 24) | ((long) (root + 1) << 32);
    }

    void writeTo(MemorySegment m, long at) {
        m.set(ValueLayout.JAVA_LONG, at, kind);
        m.set(ValueLayout.JAVA_LONG, at + 8, program);
        m.set(ValueLayout.JAVA_LONG, at + 16, elems);
        m.set(ValueLayout.JAVA_LONG, at + 24, context);
    }

    boolean matches(MemorySegment m, long at) {
        return m.get(ValueLayout.JAVA_LONG, at) == kind && m.get(ValueLayout.JAVA_LONG, at + 8) == program
                && m.get(ValueLayout.JAVA_LONG, at + 16) == elems && m.get(ValueLayout.JAVA_LONG, at + 24) == context;
    }

    static CallRecord readFrom(MemorySegment m, long at) {
        return new CallRecord(m.get(ValueLayout.JAVA_LONG, at), m.get(ValueLayout.JAVA_LONG, at + 8),
                m.get(ValueLayout.JAVA_LONG, at + 16), m.get(ValueLayout.JAVA_LONG, at + 24));
    }

    /** @return a number that differs, with high probability, for calls that differ (the first call's agreement) */
    long fingerprint() {
        long h = kind * 0x9E3779B97F4A7C15L;
        h = (h ^ program) * 0xBF58476D1CE4E5B9L;
        h = (h ^ elems) * 0x94D049BB133111EBL;
        h = (h ^ context) * 0x9E3779B97F4A7C15L;
        return (h ^ (h >>> 31)) & Long.MAX_VALUE;
    }

    /**
     * @param programs the runtime's programs, to name the one run
     * @return the call as its caller wrote it, e.g. {@code allreduce of 1024 INT32 SUM in place, blocking, on
     *         communicator 0, with MSCCL program 'ring'}
     */
    String describe(List<MscclProgram> programs) {
        int coll = (int) (kind & 0xff);
        String name = switch (coll) {
            case 0, 1, 2, 3 -> Collective.values()[coll].xml();
            case REDUCE -> "reduce to rank " + ((kind >>> 32) - 1);
            case BROADCAST -> "broadcast from rank " + ((kind >>> 32) - 1);
            default -> "an unknown call (" + Long.toHexString(kind) + ")";
        };
        int type = (int) ((kind >>> 16) & 0xff) - 1;
        int op = (int) ((kind >>> 24) & 0xff) - 1;
        int trigger = (int) ((kind >>> 9) & 3);
        StringBuilder b = new StringBuilder(name).append(" of ").append(elems).append(' ')
                .append(type >= 0 && type < DataType.values().length ? DataType.values()[type] : "?");
        if (coll == Collective.ALLREDUCE.ordinal() || coll == Collective.REDUCE_SCATTER.ordinal() || coll == REDUCE) {
            b.append(' ').append(op >= 0 && op < ReduceOp.values().length ? ReduceOp.values()[op] : "?");
        }
        b.append((kind & (1L << 8)) != 0 ? " in place" : " out of place")
                .append(trigger == STREAM ? ", on a stream" : trigger == KI ? ", from the KI executor" : ", blocking")
                .append(", on communicator ").append(context).append(", with ");
        if (program == 0) {
            b.append("the built-in algorithm");
        } else if (program - 1 < programs.size()) {
            b.append("MSCCL program '").append(programs.get((int) program - 1).name()).append('\'');
        } else {
            b.append("MSCCL program #").append(program - 1);
        }
        return b.toString();
    }
}
