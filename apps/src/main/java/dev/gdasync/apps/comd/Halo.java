package dev.gdasync.apps.comd;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One of CoMD's halo exchanges: what each of the six faces sends and how a received message is taken in. Faces are
 * numbered x-, x+, y-, y+, z-, z+; the exchange runs axis by axis, each axis sending to both neighbors at once.
 *
 * <p>A message is a header of {@value #HEADER} bytes (the record count, then zero) and the records, little-endian.
 * Receivers post buffers of the face's {@link #capacity}; the header tells how much of it the sender filled, so a
 * sender may also send the whole capacity (the stream and kernel models, whose sends are prepared before the data
 * exists).
 */
abstract class Halo {
    /** Bytes before the records. */
    static final int HEADER = 8;
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED;
    /** Face numbers. */
    static final int X_MINUS = 0;
    static final int X_PLUS = 1;

    /** The rank across each face. */
    final int[] nbrRank = new int[6];

    Halo(Domain domain) {
        nbrRank[0] = domain.processorNum(-1, 0, 0);
        nbrRank[1] = domain.processorNum(+1, 0, 0);
        nbrRank[2] = domain.processorNum(0, -1, 0);
        nbrRank[3] = domain.processorNum(0, +1, 0);
        nbrRank[4] = domain.processorNum(0, 0, -1);
        nbrRank[5] = domain.processorNum(0, 0, +1);
    }

    /** @return what is exchanged, for messages ("atoms", "dfEmbed") */
    abstract String name();

    /** @return the bytes of one record */
    abstract int recordBytes();

    /** @return the most records a face can send */
    abstract int maxRecords(int face);

    /** @return the largest message of a face, header included */
    final long capacity(int face) {
        return HEADER + (long) maxRecords(face) * recordBytes();
    }

    /**
     * Packs what {@code face} sends.
     *
     * @return the bytes written, header included
     */
    final int load(int face, MemorySegment buf) {
        int n = loadRecords(face, buf, HEADER);
        buf.set(INT, 0, n);
        buf.set(INT, 4, 0);
        return HEADER + n * recordBytes();
    }

    /** Takes in a message that arrived across {@code face}. */
    final void unload(int face, MemorySegment buf) {
        int n = buf.get(INT, 0);
        if (n < 0 || HEADER + (long) n * recordBytes() > buf.byteSize()) {
            throw new IllegalStateException("a " + name() + " message across face " + face + " says it holds " + n
                    + " records, which do not fit its " + buf.byteSize() + " bytes");
        }
        unloadRecords(face, buf, HEADER, n);
    }

    /** @return the records written from {@code offset} */
    abstract int loadRecords(int face, MemorySegment buf, long offset);

    abstract void unloadRecords(int face, MemorySegment buf, long offset, int count);

    /** @return the count in a message's header */
    static int count(MemorySegment buf) {
        return buf.get(INT, 0);
    }
}
