package dev.gdasync.test.harness;

import java.util.HexFormat;

/** Encoding of numbers and byte strings on the parent-child text channel: unsigned hex, no prefix. */
final class Wire {
    private Wire() {
    }

    static String hex(long v) {
        return Long.toHexString(v);
    }

    static long num(String s) {
        return Long.parseUnsignedLong(s, 16);
    }

    static String bytes(byte[] b) {
        return b.length == 0 ? "-" : HexFormat.of().formatHex(b);
    }

    static byte[] bytes(String s) {
        return s.equals("-") ? new byte[0] : HexFormat.of().parseHex(s);
    }

    /** One line, for an ERR answer. */
    static String oneLine(Throwable t) {
        String m = t.getClass().getSimpleName() + ": " + t.getMessage();
        return m.replace('\n', ' ').replace('\r', ' ');
    }
}
