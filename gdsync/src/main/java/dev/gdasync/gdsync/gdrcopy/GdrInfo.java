package dev.gdasync.gdsync.gdrcopy;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * What GDRCopy reports about a pinned buffer: {@code gdr_info_t} ({@code gdr_get_info_v2}, or
 * {@code gdr_get_info} on GDRCopy 2.0 to 2.3).
 *
 * @param va          the device address of the first pinned byte, rounded down to the GPU page
 * @param mappedSize  the pinned bytes, whole GPU pages: what a mapping covers
 * @param pageSize    the GPU page size, 65536
 * @param tmCycles    the time-stamp cycles the pin took (deprecated by GDRCopy)
 * @param cyclesPerMs time-stamp cycles per millisecond (deprecated by GDRCopy)
 * @param mapped      whether the buffer is mapped into this process
 * @param wcMapping   whether that mapping is write-combined
 * @param mappingType the mapping's type; derived from {@code mapped} and {@code wcMapping} on GDRCopy 2.0 to 2.3
 */
public record GdrInfo(long va, long mappedSize, int pageSize, long tmCycles, int cyclesPerMs, boolean mapped,
                      boolean wcMapping, GdrMappingType mappingType) {

    /**
     * Reads the structure the library filled.
     *
     * @param info   {@link GdrLibrary#INFO_V2} or {@link GdrLibrary#INFO_V1} bytes
     * @param withType whether {@code info} is the v2 structure, which holds {@code mapping_type}
     * @return the record
     */
    static GdrInfo read(MemorySegment info, boolean withType) {
        int flags = info.get(JAVA_INT, GdrLibrary.INFO_FLAGS);
        boolean mapped = (flags & GdrLibrary.INFO_MAPPED_BIT) != 0;
        boolean wc = (flags & GdrLibrary.INFO_WC_MAPPING_BIT) != 0;
        GdrMappingType type = withType
                ? GdrMappingType.ofCode(info.get(JAVA_INT, GdrLibrary.INFO_MAPPING_TYPE))
                : !mapped ? GdrMappingType.NONE : wc ? GdrMappingType.WC : GdrMappingType.CACHING;
        return new GdrInfo(info.get(JAVA_LONG, GdrLibrary.INFO_VA), info.get(JAVA_LONG, GdrLibrary.INFO_MAPPED_SIZE),
                info.get(JAVA_INT, GdrLibrary.INFO_PAGE_SIZE), info.get(JAVA_LONG, GdrLibrary.INFO_TM_CYCLES),
                info.get(JAVA_INT, GdrLibrary.INFO_CYCLES_PER_MS), mapped, wc, type);
    }

    @Override
    public String toString() {
        return "gdr_info{va=0x" + Long.toHexString(va) + ", mapped_size=" + mappedSize + ", page_size=" + pageSize
                + ", mapped=" + mapped + ", wc_mapping=" + wcMapping + ", mapping_type=" + mappingType + "}";
    }
}
