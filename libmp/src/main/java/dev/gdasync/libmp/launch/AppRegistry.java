package dev.gdasync.libmp.launch;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.Collections;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The programs known by short name: every {@value #RESOURCE} on the class path maps names to
 * fully qualified main classes ({@code pingpong=dev.gdasync.apps.pingpong.PingPong}). Any other name is taken
 * as a main class, with or without a package.
 */
final class AppRegistry {
    static final String RESOURCE = "META-INF/gdasync-apps.properties";

    private final Map<String, String> apps;
    private final ClassLoader loader;

    private AppRegistry(Map<String, String> apps, ClassLoader loader) {
        this.apps = apps;
        this.loader = loader;
    }

    /**
     * Reads every registry file that {@code loader} sees.
     *
     * @throws IllegalStateException if a file cannot be read or two files give one name different classes
     */
    static AppRegistry load(ClassLoader loader) {
        Map<String, String> apps = new TreeMap<>();
        Map<String, URL> origin = new TreeMap<>();
        try {
            for (URL url : Collections.list(loader.getResources(RESOURCE))) {
                Properties p = new Properties();
                try (InputStream in = url.openStream()) {
                    p.load(in);
                }
                for (String name : p.stringPropertyNames()) {
                    String main = p.getProperty(name).strip();
                    String before = apps.putIfAbsent(name, main);
                    if (before != null && !before.equals(main)) {
                        throw new IllegalStateException("the application name '" + name + "' means " + before + " in "
                                + origin.get(name) + " and " + main + " in " + url);
                    }
                    origin.putIfAbsent(name, url);
                }
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the application registry " + RESOURCE + ": " + e, e);
        }
        return new AppRegistry(Collections.unmodifiableMap(apps), loader);
    }

    /** @return the registered short names and their main classes, sorted by name */
    Map<String, String> apps() {
        return apps;
    }

    /**
     * @param app       a short name, or a main class with or without a package
     * @param classpath the program's class path, for messages
     * @return the main class to run
     * @throws IllegalArgumentException if the name is unknown or the class is not on the class path
     */
    String resolve(String app, ClassPath classpath) {
        String registered = apps.get(app);
        String main = registered != null ? registered : app;
        try {
            Class.forName(main, false, loader);
            return main;
        } catch (ClassNotFoundException | LinkageError e) {
            String cause = e instanceof ClassNotFoundException ? "" : " (" + e + ")";
            if (registered != null) {
                throw new IllegalArgumentException("the program '" + app + "' is " + main
                        + ", which is not on the class path" + cause);
            }
            if (!app.contains(".") && e instanceof ClassNotFoundException) {
                throw new IllegalArgumentException("unknown program '" + app + "': not a short name ("
                        + (apps.isEmpty() ? "none are known" : "known: " + String.join(", ", apps.keySet()))
                        + ") and no class " + app + " on the class path (" + classpath + ")");
            }
            throw new IllegalArgumentException("the main class " + main + " is not on the class path (" + classpath + ")"
                    + cause + (classpath.isEmpty() ? ": give its folder or jar with --classpath" : ""));
        }
    }
}
