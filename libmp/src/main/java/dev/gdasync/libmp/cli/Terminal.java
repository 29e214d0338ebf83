package dev.gdasync.libmp.cli;

import java.io.Console;

/**
 * Whether this process talks to a person at a terminal, which decides colour and in-place progress.
 *
 * <p>On Java 22 and later {@link System#console()} returns a console even when the output is redirected, so the
 * test is {@link Console#isTerminal()}. {@code NO_COLOR} (any value, see no-color.org) and {@code TERM=dumb}
 * turn colour off as they do for most tools.
 */
public final class Terminal {
    private Terminal() {
    }

    /** @return whether standard input and output are a terminal */
    public static boolean isTerminal() {
        Console c = System.console();
        return c != null && c.isTerminal();
    }

    /** @return whether output may carry colour (ANSI escape codes) */
    public static boolean colours() {
        String noColor = System.getenv("NO_COLOR");
        if (noColor != null && !noColor.isEmpty()) {
            return false;
        }
        if ("dumb".equals(System.getenv("TERM"))) {
            return false;
        }
        return isTerminal();
    }
}
