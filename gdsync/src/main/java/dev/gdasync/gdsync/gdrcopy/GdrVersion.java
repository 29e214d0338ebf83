package dev.gdasync.gdsync.gdrcopy;

/**
 * A GDRCopy version: of the user library ({@code gdr_runtime_get_version}) or of the gdrdrv kernel module
 * ({@code gdr_driver_get_version}).
 *
 * @param major the major version (2 for every library this binding loads)
 * @param minor the minor version
 */
public record GdrVersion(int major, int minor) {
    /** @return {@code major.minor}, for example {@code 2.4} */
    @Override
    public String toString() {
        return major + "." + minor;
    }
}
