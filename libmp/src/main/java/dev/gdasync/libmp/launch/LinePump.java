package dev.gdasync.libmp.launch;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Copies a rank's output to the launcher's, line by line, each line prefixed with the rank
 * ({@code "[3] "}). Lines are copied as bytes, whatever their encoding, and written whole under the
 * target's lock, so the lines of different ranks never interleave. The target is flushed whenever the
 * rank has nothing more to read at once. A last line without a line break gets one; a line longer than
 * {@value #MAX_LINE} bytes is cut into pieces.
 */
final class LinePump implements Runnable {
    static final int MAX_LINE = 1 << 20;

    private final InputStream in;
    private final PrintStream out;
    private final byte[] prefix;

    LinePump(InputStream in, PrintStream out, int rank) {
        this(in, out, Integer.toString(rank));
    }

    /** A pump whose lines carry another label, such as {@code "[proxy] "}. */
    LinePump(InputStream in, PrintStream out, String label) {
        this.in = in;
        this.out = out;
        this.prefix = ("[" + label + "] ").getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public void run() {
        ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        byte[] buf = new byte[8192];
        try (in) {
            for (int n; (n = in.read(buf)) > 0; ) {
                int start = 0;
                for (int i = 0; i < n; i++) {
                    if (buf[i] == '\n') {
                        line.write(buf, start, i - start);
                        emit(line);
                        start = i + 1;
                    }
                }
                line.write(buf, start, n - start);
                if (line.size() >= MAX_LINE) {
                    emit(line);
                }
                if (in.available() == 0) {
                    out.flush();
                }
            }
        } catch (IOException e) {
            // the rank's end closed (it died or was killed): what was read is emitted below
        }
        if (line.size() > 0) {
            emit(line);
        }
        out.flush();
    }

    private void emit(ByteArrayOutputStream line) {
        synchronized (out) {
            out.write(prefix, 0, prefix.length);
            out.write(line.toByteArray(), 0, line.size());
            out.write('\n');
        }
        line.reset();
    }
}
