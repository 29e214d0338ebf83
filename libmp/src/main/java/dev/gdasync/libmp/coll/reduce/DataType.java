package dev.gdasync.libmp.coll.reduce;

/** The element types the reducing collectives combine (little-endian, as the host stores them). */
public enum DataType {
    /** 32-bit two's-complement integer ({@code int}). */
    INT32(4),
    /** 64-bit two's-complement integer ({@code long}). */
    INT64(8),
    /** IEEE 754 binary32 ({@code float}). */
    FLOAT32(4),
    /** IEEE 754 binary64 ({@code double}). */
    FLOAT64(8);

    private final int bytes;

    DataType(int bytes) {
        this.bytes = bytes;
    }

    /** @return the size of one element in bytes */
    public int bytes() {
        return bytes;
    }
}
