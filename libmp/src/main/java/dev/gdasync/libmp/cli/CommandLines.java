package dev.gdasync.libmp.cli;

import dev.gdasync.libmp.bootstrap.EnvNames;
import picocli.CommandLine;
import picocli.CommandLine.Help.Ansi;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * Reads a command line with picocli the way every gdasync command does.
 *
 * <ul>
 * <li>{@code -h}/{@code --help} prints the usage to standard output, {@code -V}/{@code --version} the version;
 *     both exit with 0;</li>
 * <li>a wrong command line prints one line that names the option or value and what is wrong with it, and one
 *     line of hint ({@code Run 'pingpong --help' for the options.}), to standard error, and exits with
 *     {@value #USAGE_ERROR};</li>
 * <li>the usage has colour only when the output is a terminal ({@link Terminal});</li>
 * <li>an option given twice keeps its last value, as most tools do.</li>
 * </ul>
 */
public final class CommandLines {
    /** The exit status of a wrong command line. */
    public static final int USAGE_ERROR = 2;
    /** The width of usage texts. */
    static final int WIDTH = 100;
    private static final Pattern INVALID_VALUE_LABEL = Pattern.compile("^(invalid value for option '[^']+') \\([^)]*\\):");

    /** A command whose options depend on each other; checked after they were read. */
    public interface Checked {
        /**
         * Checks the options together.
         *
         * @throws IllegalArgumentException with a message that names the options in conflict
         */
        void check();
    }

    private CommandLines() {
    }

    /**
     * Whether this process prints a job's usage text and command-line errors: rank 0 of a launched job, or a process
     * not started as a rank ({@code GDASYNC_RANK} unset), so a wrong option is reported once, not once per rank.
     *
     * @return whether this process speaks for the job
     */
    public static boolean speaksForJob() {
        String rank = System.getenv(EnvNames.RANK);
        return rank == null || "0".equals(rank);
    }

    /**
     * @param command an object annotated with picocli's {@code @Command}
     * @return its command line with the project's settings
     */
    public static CommandLine of(Object command) {
        CommandLine cl = new CommandLine(command);
        cl.setColorScheme(CommandLine.Help.defaultColorScheme(Terminal.colours() ? Ansi.ON : Ansi.OFF));
        cl.setUsageHelpWidth(WIDTH);
        cl.setOverwrittenOptionsAllowed(true);
        return cl;
    }

    /**
     * Reads the arguments into the command object, and answers help, version and mistakes.
     *
     * @param cl    the command line from {@link #of}
     * @param args  the arguments
     * @param out   where help and version go
     * @param err   where mistakes go
     * @param speak whether to print at all (under a launcher every rank reads the same arguments; one speaks)
     * @return empty when the command should run; else the status to exit with (0 after help or version,
     *         {@value #USAGE_ERROR} after a mistake)
     */
    public static OptionalInt parse(CommandLine cl, String[] args, PrintStream out, PrintStream err, boolean speak) {
        try {
            cl.parseArgs(args);
            if (cl.isUsageHelpRequested()) {
                if (speak) {
                    cl.usage(out);
                    out.flush();
                }
                return OptionalInt.of(0);
            }
            if (cl.isVersionHelpRequested()) {
                if (speak) {
                    cl.printVersionHelp(out);
                    out.flush();
                }
                return OptionalInt.of(0);
            }
            if (cl.getCommand() instanceof Checked checked) {
                checked.check();
            }
            return OptionalInt.empty();
        } catch (ParameterException | IllegalArgumentException e) {
            if (speak) {
                err.println(shortName(cl) + ": " + describe(e));
                err.println(hint(cl));
                err.flush();
            }
            return OptionalInt.of(USAGE_ERROR);
        }
    }

    /**
     * Reads arguments without printing anything: for a command line a program made itself (a child's) and for
     * tests.
     *
     * @param cl   the command line from {@link #of}
     * @param args the arguments
     * @return false when help or version was asked for (the command should not run), else true
     * @throws IllegalArgumentException with the one-line message {@link #parse} would print
     */
    public static boolean parseOrThrow(CommandLine cl, String... args) {
        try {
            cl.parseArgs(args);
            if (cl.isUsageHelpRequested() || cl.isVersionHelpRequested()) {
                return false;
            }
            if (cl.getCommand() instanceof Checked checked) {
                checked.check();
            }
            return true;
        } catch (ParameterException e) {
            throw new IllegalArgumentException(describe(e), e);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(describe(e), e);
        }
    }

    /**
     * @param cl a command line from {@link #of}
     * @return its usage text without colour, for tests and documentation
     */
    public static String usage(CommandLine cl) {
        return cl.getUsageMessage(CommandLine.Help.Ansi.OFF);
    }

    /** @return the name the command is run by, as its usage shows it ("scripts/mprun -np 2 pingpong") */
    static String name(CommandLine cl) {
        return cl.getCommandSpec().qualifiedName();
    }

    /**
     * @param cl a command line from {@link #of}
     * @return the command's own name, the last word of the name its usage shows ("pingpong"), which starts its
     *         messages
     */
    public static String shortName(CommandLine cl) {
        String name = name(cl).strip();
        return name.substring(name.lastIndexOf(' ') + 1);
    }

    /**
     * @param cl a command line from {@link #of}
     * @return the hint printed after a mistake
     */
    public static String hint(CommandLine cl) {
        return "Run '" + name(cl) + " --help' for the options.";
    }

    /** @return a mistake in one line: picocli's message with a small first letter, and its suggestions */
    static String describe(Exception e) {
        String m = e.getMessage() == null ? e.toString() : e.getMessage().strip();
        if (m.length() > 1 && Character.isUpperCase(m.charAt(0)) && Character.isLowerCase(m.charAt(1))) {
            m = m.substring(0, 1).toLowerCase(Locale.ROOT) + m.substring(1);
        }
        int newline = m.indexOf('\n');
        if (newline >= 0) {
            m = m.substring(0, newline).strip();
        }
        // "invalid value for option '--sizes' (S[,S...]): ..." reads better without the label.
        m = INVALID_VALUE_LABEL.matcher(m).replaceFirst("$1:");
        if (e instanceof UnmatchedArgumentException u) {
            List<String> suggestions = u.getSuggestions();
            if (!suggestions.isEmpty()) {
                m += "; did you mean " + String.join(" or ", suggestions.subList(0, Math.min(3, suggestions.size()))) + "?";
            }
        }
        return m;
    }
}
