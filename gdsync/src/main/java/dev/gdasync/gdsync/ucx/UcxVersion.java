package dev.gdasync.gdsync.ucx;

/**
 * A UCX or JUCX version: major, minor, release.
 *
 * @param major   the major version
 * @param minor   the minor version
 * @param release the release
 */
public record UcxVersion(int major, int minor, int release) {

    /**
     * @param text a version such as {@code 1.12.1} (a suffix after the numbers, such as {@code -rc2}, is ignored)
     * @return the version
     * @throws IllegalArgumentException if the text does not start with two or three dotted numbers
     */
    public static UcxVersion parse(String text) {
        String[] parts = text.strip().split("[^0-9]+", 4);
        try {
            int major = Integer.parseInt(parts[0]);
            int minor = Integer.parseInt(parts[1]);
            int release = parts.length > 2 && !parts[2].isEmpty() ? Integer.parseInt(parts[2]) : 0;
            return new UcxVersion(major, minor, release);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("'" + text + "' is not a UCX version (major.minor.release)");
        }
    }

    /**
     * Whether a library of this version serves a binding built for {@code binding}: UCX keeps its API
     * backward compatible within a major version, so the library's major.minor must be the binding's or newer.
     *
     * @param binding the version the binding was built against
     * @return whether this library serves it
     */
    public boolean serves(UcxVersion binding) {
        return major == binding.major && (minor > binding.minor || minor == binding.minor);
    }

    @Override
    public String toString() {
        return major + "." + minor + "." + release;
    }
}
