package dev.gdasync.libmp.bootstrap;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * Job ids: the names every rank of a job shares, {@code [A-Za-z0-9_.-]{1,64}} (they name the job's
 * shared-memory directory, so they are also safe as one path component: never "." or "..").
 */
public final class JobIds {
    /** The longest job id. */
    public static final int MAX_LENGTH = 64;
    private static final Pattern VALID = Pattern.compile("[A-Za-z0-9_.-]{1," + MAX_LENGTH + "}");
    private static final SecureRandom RANDOM = new SecureRandom();

    private JobIds() {
    }

    /**
     * @param id a candidate
     * @return whether {@code id} is a valid job id
     */
    public static boolean isValid(String id) {
        return id != null && VALID.matcher(id).matches() && !id.equals(".") && !id.equals("..");
    }

    /**
     * Checks a job id given by the user.
     *
     * @param id   the id
     * @param from where it came from, for the message (for example "GDASYNC_JOB_ID")
     * @return {@code id}
     * @throws BootstrapException if it is not valid
     */
    public static String require(String id, String from) {
        if (!isValid(id)) {
            throw new BootstrapException(from + "='" + id + "' is not a valid job id: use 1 to " + MAX_LENGTH
                    + " characters of A-Z a-z 0-9 _ . - (not '.' or '..')");
        }
        return id;
    }

    /**
     * Makes a valid job id out of any text, identically on every rank: characters outside the allowed
     * set become '_' and the result is cut to {@link #MAX_LENGTH}.
     *
     * @param text the raw id (for example a scheduler's job and step ids)
     * @return a valid job id
     */
    public static String sanitize(String text) {
        StringBuilder sb = new StringBuilder(Math.min(text.length(), MAX_LENGTH));
        for (int i = 0; i < text.length() && sb.length() < MAX_LENGTH; i++) {
            char c = text.charAt(i);
            boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '_' || c == '.' || c == '-';
            sb.append(ok ? c : '_');
        }
        String id = sb.toString();
        return isValid(id) ? id : "job_" + id;
    }

    /**
     * @param prefix a short prefix of valid characters (for example "local")
     * @return {@code prefix-} followed by 16 random hex digits
     */
    public static String random(String prefix) {
        byte[] b = new byte[8];
        RANDOM.nextBytes(b);
        return require(prefix + "-" + HexFormat.of().formatHex(b), "prefix");
    }
}
