package dev.gdasync.gdsync.nic;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A queue pair's endpoint descriptor: the bytes a peer needs to connect to it. A bootstrap carries
 * them between processes; their content belongs to the provider that made them.
 */
public final class Endpoint {
    private final byte[] bytes;

    private Endpoint(byte[] bytes) {
        this.bytes = bytes;
    }

    /**
     * @param bytes encoded endpoint, copied
     * @return the endpoint
     * @throws NullPointerException     if the bytes are null
     * @throws IllegalArgumentException if empty
     */
    public static Endpoint of(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes must not be null");
        if (bytes.length == 0) {
            throw new IllegalArgumentException("an endpoint descriptor cannot be empty");
        }
        return new Endpoint(bytes.clone());
    }

    /**
     * @param hex the endpoint as from {@link #toHex()}
     * @return the endpoint
     * @throws NullPointerException     if the text is null
     * @throws IllegalArgumentException if not hexadecimal or empty
     */
    public static Endpoint fromHex(String hex) {
        Objects.requireNonNull(hex, "hex must not be null");
        byte[] bytes;
        try {
            bytes = HexFormat.of().parseHex(hex.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("an endpoint must be hexadecimal, got '" + hex + "': " + e.getMessage(), e);
        }
        return of(bytes);
    }

    /** @return a copy of the encoded bytes */
    public byte[] toBytes() {
        return bytes.clone();
    }

    /** @return the bytes as lower-case hexadecimal, for text channels */
    public String toHex() {
        return HexFormat.of().formatHex(bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Endpoint e && Arrays.equals(bytes, e.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return "Endpoint[" + bytes.length + " bytes]";
    }
}
