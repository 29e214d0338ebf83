package dev.gdasync.libmp.bootstrap;

import dev.gdasync.libmp.bootstrap.Frames.Collective;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.function.Consumer;

/** One rank's end of the {@link EnvBootstrap} wire: rank 0's {@link RootHub} or a {@link MemberLink}. */
interface Hub extends AutoCloseable {

    /**
     * Runs collective {@code seq}.
     *
     * @param seq  the collective's number, counted from 0 by every rank
     * @param c    which collective
     * @param mine this rank's contribution (not copied)
     * @return every rank's contribution, indexed by rank
     */
    List<byte[]> collective(long seq, Collective c, byte[] mine);

    /** @return why the job failed, or null (see {@link Bootstrap#failure()}) */
    String failure();

    /** @param listener run once when the job fails (see {@link Bootstrap#onFailure}) */
    void onFailure(Consumer<String> listener);

    /** @param reason why this rank aborts the job (see {@link Bootstrap#abort}) */
    void abort(String reason);

    /** Leaves the job, saying goodbye so that nobody takes it for a failure; never throws. */
    @Override
    void close();

    /** @return a short description of a connection failure, for messages */
    static String describe(IOException e) {
        if (e instanceof EOFException) {
            return "connection closed";
        }
        if (e instanceof SocketTimeoutException) {
            return "no answer in time";
        }
        if (e instanceof SocketException && e.getMessage() != null) {
            return e.getMessage().toLowerCase(java.util.Locale.ROOT);
        }
        return e.toString();
    }
}
