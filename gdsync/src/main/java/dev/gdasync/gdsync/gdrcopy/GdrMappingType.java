package dev.gdasync.gdsync.gdrcopy;

/**
 * How the CPU sees a pinned buffer's mapping: {@code gdr_mapping_type_t}. GDRCopy 2.0 to 2.3 report only
 * whether a mapping exists and whether it is write-combined; this binding derives the type from those two
 * bits for them, as GDRCopy 2.4 and later do for an old gdrdrv.
 */
public enum GdrMappingType {
    /** {@code GDR_MAPPING_TYPE_NONE}: not mapped. */
    NONE(0),
    /** {@code GDR_MAPPING_TYPE_WC}: write-combined, the usual BAR1 mapping on x86: fast stores, slow loads. */
    WC(1),
    /** {@code GDR_MAPPING_TYPE_CACHING}: cached (coherent platforms). */
    CACHING(2),
    /** {@code GDR_MAPPING_TYPE_DEVICE}: device (uncached) memory type, on some ARM platforms. */
    DEVICE(3);

    private final int code;

    GdrMappingType(int code) {
        this.code = code;
    }

    /** @return the {@code gdr_mapping_type_t} value */
    public int code() {
        return code;
    }

    /**
     * @param code a {@code gdr_mapping_type_t} value
     * @return its type
     * @throws IllegalArgumentException if the value is unknown
     */
    public static GdrMappingType ofCode(int code) {
        for (GdrMappingType type : values()) {
            if (type.code == code) {
                return type;
            }
        }
        throw new IllegalArgumentException("unknown gdr_mapping_type_t " + code + " (NONE=0, WC=1, CACHING=2, DEVICE=3)");
    }
}
