/**
 * The command-line conventions that {@code mprun} and the applications share, on picocli: {@code --help} and
 * {@code --version} everywhere, an error that names the bad option or value followed by a one-line hint (never
 * the whole usage), exit status 2 for a wrong command line, colour only on a terminal, output files checked
 * before any work starts, and a rate-limited progress line for long runs.
 *
 * <p>Layer: a tool beside libmp, like {@code launch}; it calls picocli and the JDK only.
 */
package dev.gdasync.libmp.cli;
