package dev.gdasync.libmp.coll.msccl;

/** The buffers a step names in {@code srcbuf}/{@code dstbuf}. */
public enum Buffer {
    /** {@code i}: the collective's input. */
    INPUT("i"),
    /** {@code o}: the collective's output. */
    OUTPUT("o"),
    /** {@code s}: the rank's scratch buffer of {@code s_chunks} chunks, held by the runtime. */
    SCRATCH("s");

    private final String xml;

    Buffer(String xml) {
        this.xml = xml;
    }

    /** @return the name in {@code srcbuf}/{@code dstbuf} */
    public String xml() {
        return xml;
    }

    /**
     * @param xml a buffer attribute
     * @return its buffer, or null if it names none
     */
    public static Buffer ofXml(String xml) {
        for (Buffer b : values()) {
            if (b.xml.equals(xml)) {
                return b;
            }
        }
        return null;
    }
}
