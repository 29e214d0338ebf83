package dev.gdasync.libmp.cli;

import picocli.CommandLine;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The version line of every command's {@code --version}: the command, the project's version (written into a
 * resource by the build) and the Java runtime, for example {@code pingpong (gdasync 0.1.0-SNAPSHOT), Java 25.0.3}.
 */
public final class ProjectVersion implements IVersionProvider {
    private static final String RESOURCE = "version.properties";

    /** The command whose version is asked for; picocli sets it. */
    @CommandLine.Spec
    CommandSpec spec;

    /** Made by picocli. */
    public ProjectVersion() {
    }

    /** @return the project's version, or "unknown" when the build did not record it */
    public static String version() {
        try (InputStream in = ProjectVersion.class.getResourceAsStream(RESOURCE)) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                String v = p.getProperty("version", "").strip();
                if (!v.isEmpty() && !v.startsWith("${")) {
                    return v;
                }
            }
        } catch (IOException e) {
            // below
        }
        return "unknown";
    }

    @Override
    public String[] getVersion() {
        // The name the usage shows may be a whole command line ("scripts/mprun -np 2 pingpong"): its last word.
        String name = spec == null ? "gdasync" : spec.qualifiedName().strip();
        name = name.substring(name.lastIndexOf(' ') + 1);
        return new String[]{name + " (gdasync " + version() + "), Java " + System.getProperty("java.version")
                + " (" + System.getProperty("java.vendor") + ")"};
    }
}
