package dev.gdasync.test.firsthour;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The documentation is self-contained: every link of README.md and docs/ names a file of the repository that exists,
 * or a public web page (http or https); nothing points beside the repository (the {@code ../shared} of a
 * development machine) or at a local file.
 */
class DocLinksTest {
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)|href=\"([^\"]+)\"|src=\"([^\"]+)\"");

    @Test
    void everyLinkStaysInTheRepositoryOrGoesToAPublicPage() throws IOException {
        Path root = Path.of(System.getProperty("gdasync.root", "..")).toAbsolutePath().normalize();
        List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md")));
        try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<String> bad = new ArrayList<>();
        int links = 0;
        for (Path page : pages) {
            String text = Files.readString(page);
            String name = root.relativize(page).toString();
            if (text.contains("../shared")) {
                bad.add(name + ": mentions ../shared, which a clone does not have");
            }
            // Code is not a link: fenced blocks and `inline code` go first.
            String prose = text.replaceAll("(?ms)^```.*?^```$", "").replaceAll("`[^`\n]*`", "");
            Matcher m = LINK.matcher(prose);
            while (m.find()) {
                String target = m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3);
                links++;
                String problem = check(root, page, target);
                if (problem != null) {
                    bad.add(name + ": " + target + ": " + problem);
                }
            }
        }
        assertEquals(List.of(), bad, "of " + links + " links in " + pages.size() + " pages");
    }

    /** @return what is wrong with a link, or null */
    static String check(Path root, Path page, String target) {
        if (target.startsWith("#")) {
            return null; // within the page
        }
        String scheme = URI.create(target.replace(" ", "%20")).getScheme();
        if (scheme != null) {
            return scheme.equals("https") || scheme.equals("http") ? null : "not a web page (" + scheme + ")";
        }
        String path = target.replaceAll("[#?].*$", "");
        Path file = page.getParent().resolve(path).normalize();
        if (!file.startsWith(root)) {
            return "leaves the repository";
        }
        return Files.exists(file) ? null : "no such file " + root.relativize(file);
    }
}
