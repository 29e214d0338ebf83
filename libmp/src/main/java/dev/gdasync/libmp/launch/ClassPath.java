package dev.gdasync.libmp.launch;

import dev.gdasync.libmp.bootstrap.EnvNames;

import java.io.File;
import java.io.IOException;
import java.net.URL;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Where a user's program is: the entries the ranks' class path starts with, before the launcher's own jars.
 *
 * <p>It comes from the first of: {@code --classpath CP} (or {@code -cp}); {@code --jvm-opt -cp --jvm-opt CP}, as a
 * java user writes it; the variable {@value #VARIABLE}; the variable {@code CLASSPATH}, which java itself reads.
 * Entries are separated by {@code ':'}; {@code dir/*} means every jar in {@code dir}, as for java; an empty entry
 * means the working folder, as for java. Every entry given to the launcher must exist: a mistyped path is an
 * error before any rank starts, not a class that later cannot be found. {@code CLASSPATH}, often set for other
 * programs, is read as java reads it: entries that do not exist are skipped.
 */
final class ClassPath {
    /** The variable that names the program's class path when {@code --classpath} is not given. */
    static final String VARIABLE = EnvNames.CLASSPATH;
    private static final List<String> JAVA_OPTIONS = List.of("-cp", "-classpath", "--class-path");

    private final List<Path> entries;
    private final String source;

    private ClassPath(List<Path> entries, String source) {
        this.entries = List.copyOf(entries);
        this.source = source;
    }

    /** @return a class path with no entries (only the launcher's jars) */
    static ClassPath none() {
        return new ClassPath(List.of(), "");
    }

    /**
     * Picks the class path and checks it.
     *
     * @param option  the value of --classpath, or null
     * @param jvmOpts the --jvm-opt options; a class path option among them is taken out
     * @param env     the launcher's environment
     * @return the class path
     * @throws IllegalArgumentException if it is given twice or an entry does not exist
     */
    static ClassPath choose(String option, List<String> jvmOpts, Map<String, String> env) {
        String fromJvmOpts = takeFromJvmOpts(jvmOpts);
        if (option != null && fromJvmOpts != null) {
            throw new IllegalArgumentException("the class path is given twice, with --classpath and with --jvm-opt: give it once");
        }
        if (option != null) {
            return parse(option, "--classpath", true);
        }
        if (fromJvmOpts != null) {
            return parse(fromJvmOpts, "--jvm-opt -cp", true);
        }
        String variable = env.get(VARIABLE);
        if (variable != null && !variable.isBlank()) {
            return parse(variable, VARIABLE, true);
        }
        String java = env.get("CLASSPATH");
        if (java != null && !java.isBlank()) {
            return parse(java, "CLASSPATH", false);
        }
        return none();
    }

    private static String takeFromJvmOpts(List<String> jvmOpts) {
        String found = null;
        for (int i = 0; i < jvmOpts.size(); i++) {
            String o = jvmOpts.get(i);
            String value = null;
            if (JAVA_OPTIONS.contains(o)) {
                if (i + 1 >= jvmOpts.size()) {
                    throw new IllegalArgumentException("--jvm-opt " + o + " needs the class path as the next --jvm-opt");
                }
                value = jvmOpts.remove(i + 1);
                jvmOpts.remove(i);
                i--;
            } else if (o.startsWith("--class-path=")) {
                value = o.substring("--class-path=".length());
                jvmOpts.remove(i);
                i--;
            }
            if (value != null) {
                if (found != null) {
                    throw new IllegalArgumentException("the class path is given twice with --jvm-opt: give it once");
                }
                found = value;
            }
        }
        return found;
    }

    /**
     * @param value  entries separated by ':'
     * @param source where they came from, for messages
     * @param strict whether an entry that does not exist is an error (else it is skipped)
     * @return the checked class path, entries made absolute
     * @throws IllegalArgumentException naming the first entry that does not exist
     */
    private static ClassPath parse(String value, String source, boolean strict) {
        List<Path> out = new ArrayList<>();
        for (String entry : value.split(File.pathSeparator, -1)) {
            Path p;
            try {
                p = Path.of(entry.isEmpty() ? "." : entry).toAbsolutePath().normalize();
            } catch (InvalidPathException e) {
                throw new IllegalArgumentException(source + ": '" + entry + "' is not a valid path (" + e.getReason() + ")");
            }
            boolean wildcard = p.getFileName() != null && p.getFileName().toString().equals("*");
            Path check = wildcard ? p.getParent() : p;
            if (check == null || !Files.exists(check)) {
                if (!strict) {
                    continue;
                }
                throw new IllegalArgumentException(source + ": '" + entry + "' does not exist"
                        + (wildcard ? " (no folder " + check + ")" : ""));
            }
            if (wildcard && !Files.isDirectory(check)) {
                if (!strict) {
                    continue;
                }
                throw new IllegalArgumentException(source + ": '" + entry + "': " + check + " is not a folder");
            }
            out.add(p);
        }
        return new ClassPath(out, source);
    }

    /** @return whether no entry was given */
    boolean isEmpty() {
        return entries.isEmpty();
    }

    /** @return where the class path came from ("--classpath", a variable's name), empty when none was given */
    String source() {
        return source;
    }

    /** @return the entries as java's -cp takes them, absolute, with wildcards kept for java to expand */
    String joined() {
        return String.join(File.pathSeparator, entries.stream().map(Path::toString).toList());
    }

    /** @return the entries as URLs for a class loader, wildcards expanded to the folder's jars */
    List<URL> urls() {
        List<URL> urls = new ArrayList<>();
        try {
            for (Path p : entries) {
                if (p.getFileName() != null && p.getFileName().toString().equals("*")) {
                    try (DirectoryStream<Path> jars = Files.newDirectoryStream(p.getParent())) {
                        for (Path j : jars) {
                            if (j.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(".jar")) {
                                urls.add(j.toUri().toURL());
                            }
                        }
                    }
                } else {
                    urls.add(p.toUri().toURL());
                }
            }
        } catch (IOException e) {
            throw new IllegalArgumentException(source + ": cannot read " + e.getMessage(), e);
        }
        return urls;
    }

    /** @return the class path as given and where it came from, for messages */
    @Override
    public String toString() {
        return isEmpty() ? "the launcher's jars only" : joined() + " (" + source + ")";
    }
}
