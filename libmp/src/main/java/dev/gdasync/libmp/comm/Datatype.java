package dev.gdasync.libmp.comm;

/** Element types of the comm layer (LibMP's comm layer takes MPI's DOUBLE, FLOAT, CHAR and INT). */
public enum Datatype {
    /** 1 byte (MPI_CHAR, MPI_BYTE). */
    BYTE(1),
    /** 4-byte signed integer (MPI_INT). */
    INT(4),
    /** 8-byte signed integer (MPI_LONG_LONG). */
    LONG(8),
    /** 4-byte IEEE float (MPI_FLOAT). */
    FLOAT(4),
    /** 8-byte IEEE double (MPI_DOUBLE). */
    DOUBLE(8);

    private final int bytes;

    Datatype(int bytes) {
        this.bytes = bytes;
    }

    /** @return the size of one element in bytes */
    public int bytes() {
        return bytes;
    }

    /**
     * @param count elements
     * @return their size in bytes
     * @throws IllegalArgumentException if the count is negative or the size overflows an int
     */
    public long sizeOf(int count) {
        if (count < 0) {
            throw new IllegalArgumentException("element count must be >= 0, got " + count);
        }
        long n = (long) count * bytes;
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(count + " " + this + " elements exceed " + Integer.MAX_VALUE + " bytes");
        }
        return n;
    }
}
