package dev.gdasync.libmp.coll.msccl;

/** The step types of MSCCL-IR, with their XML names and what each one does to the connection and the buffers. */
public enum StepType {
    /** {@code s}: send src. */
    SEND("s", true, false),
    /** {@code r}: receive into dst. */
    RECV("r", false, true),
    /** {@code rcs}: receive into dst and send it on. */
    RECV_COPY_SEND("rcs", true, true),
    /** {@code rrs}: receive, reduce with src, send the result on (not stored). */
    RECV_REDUCE_SEND("rrs", true, true),
    /** {@code rrc}: receive, reduce with src, store the result in dst. */
    RECV_REDUCE_COPY("rrc", false, true),
    /** {@code rrcs}: receive, reduce with src, store the result in dst and send it on. */
    RECV_REDUCE_COPY_SEND("rrcs", true, true),
    /** {@code cpy}: copy src to dst locally. */
    COPY("cpy", false, false),
    /** {@code re}: reduce src into dst locally (dst = dst ∘ src). */
    REDUCE("re", false, false),
    /** {@code nop}: nothing but its dependency (chains of them give a step several). */
    NOP("nop", false, false);

    private final String xml;
    private final boolean sends;
    private final boolean receives;

    StepType(String xml, boolean sends, boolean receives) {
        this.xml = xml;
        this.sends = sends;
        this.receives = receives;
    }

    /** @return the name in the {@code type} attribute */
    public String xml() {
        return xml;
    }

    /** @return whether the step sends on its thread block's send connection */
    public boolean sends() {
        return sends;
    }

    /** @return whether the step receives on its thread block's receive connection */
    public boolean receives() {
        return receives;
    }

    /**
     * @param xml a {@code type} attribute
     * @return its step type, or null if it names none
     */
    public static StepType ofXml(String xml) {
        for (StepType t : values()) {
            if (t.xml.equals(xml)) {
                return t;
            }
        }
        return null;
    }
}
