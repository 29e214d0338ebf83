package dev.gdasync.libmp.bootstrap;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;

/** The per-job secret that guards the rendezvous: parsing, generation and HMAC-SHA256. */
final class Secrets {
    /** The shortest secret accepted, in bytes. */
    static final int MIN_BYTES = 16;
    private static final String HMAC = "HmacSHA256";
    private static final SecureRandom RANDOM = new SecureRandom();

    private Secrets() {
    }

    /**
     * @param hex  the secret as hex digits (surrounding white space is ignored)
     * @param from where it came from, for messages (never the value itself)
     * @return the secret's bytes
     */
    static byte[] parseHex(String hex, String from) {
        String h = hex.strip();
        if (h.length() % 2 != 0 || !h.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw new BootstrapException(from + " is not a hex string (an even number of digits 0-9 a-f)");
        }
        if (h.length() / 2 < MIN_BYTES) {
            throw new BootstrapException(from + " holds " + h.length() / 2 + " bytes; a job secret needs at least "
                    + MIN_BYTES + " (" + 2 * MIN_BYTES + " hex digits), for example from 'openssl rand -hex 32'");
        }
        return HexFormat.of().parseHex(h);
    }

    /**
     * Reads a hex secret from a file that only its owner may read.
     *
     * @param file the file
     * @param from the variable that named it, for messages
     * @return the secret's bytes
     */
    static byte[] readFile(Path file, String from) {
        try {
            if (Files.getFileStore(file).supportsFileAttributeView("posix")) {
                Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file);
                if (perms.contains(PosixFilePermission.GROUP_READ) || perms.contains(PosixFilePermission.OTHERS_READ)) {
                    throw new BootstrapException(from + "=" + file + " can be read by other users; a job secret must"
                            + " be readable by its owner only: chmod 600 " + file);
                }
            }
            return parseHex(Files.readString(file, StandardCharsets.US_ASCII), from + "=" + file);
        } catch (IOException e) {
            throw new BootstrapException("cannot read the job secret " + from + "=" + file + ": " + e, e);
        }
    }

    /** @return a fresh random secret of 32 bytes as hex */
    static String randomHex() {
        byte[] b = new byte[32];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /**
     * @param key   the secret
     * @param parts the message, concatenated
     * @return HMAC-SHA256 of the parts
     */
    static byte[] hmac(byte[] key, byte[]... parts) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(new SecretKeySpec(key, HMAC));
            for (byte[] p : parts) {
                mac.update(p);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK lacks " + HMAC, e);
        }
    }

    /**
     * @param n the number of bytes
     * @return {@code n} random bytes
     */
    static byte[] nonce(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }
}
