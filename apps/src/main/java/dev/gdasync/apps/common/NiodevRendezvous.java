package dev.gdasync.apps.common;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The meeting point of an MPJ Express niodev job, in place of MPJ's starter ({@code runtime.starter.MPJRun}): a server
 * socket on an ephemeral port of 127.0.0.1 that each rank's {@code NIODevice.init} connects to. A rank sends
 * {@code writeUTF("Sending Info")}, {@code writeInt(wport)}, {@code writeInt(rport)}, {@code writeInt(rank)}; once all
 * N ranks have, each gets the peer table {@code writeUTF("#Peer Information;host@rport@wport@rank@0;...")} in rank
 * order, with the address this server saw the rank connect from, as MPJRun writes it. The ranks then connect to one
 * another's two ports themselves.
 */
public final class NiodevRendezvous implements AutoCloseable {
    /** What a rank's first string starts with. */
    static final String HELLO = "Sending Info";
    /** The first entry of the peer table. */
    static final String PEER_TABLE = "#Peer Information";
    /** How often the accept loop looks at the ranks' processes. */
    private static final int POLL_MILLIS = 100;
    /** How long one connected rank may take to send its ports. */
    private static final int HANDSHAKE_MILLIS = 10_000;

    private final int ranks;
    private final ServerSocket server;

    /**
     * Opens the server socket.
     *
     * @param ranks the job's ranks
     * @throws IOException if no port of 127.0.0.1 can be bound
     */
    public NiodevRendezvous(int ranks) throws IOException {
        if (ranks < 1) {
            throw new IllegalArgumentException("ranks must be at least 1, not " + ranks);
        }
        this.ranks = ranks;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), ranks);
        server.setSoTimeout(POLL_MILLIS);
    }

    /** @return the address the ranks connect to ({@code 127.0.0.1}) */
    public String host() {
        return server.getInetAddress().getHostAddress();
    }

    /** @return the port the ranks connect to */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * Collects every rank's ports and sends each the peer table.
     *
     * @param timeoutMillis how long the ranks together may take to come
     * @param failure       asked every 100 ms while waiting: why the ranks cannot all come (a rank
     *                      that exited), or null
     * @return the peer table sent
     * @throws IllegalStateException naming the ranks still missing, on a failure, a timeout or a rank that broke the
     *                               protocol
     * @throws IOException           if the server socket fails
     */
    public String await(long timeoutMillis, Supplier<String> failure) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        Socket[] sockets = new Socket[ranks];
        String[] entries = new String[ranks];
        int met = 0;
        try {
            while (met < ranks) {
                String why = failure.get();
                if (why != null) {
                    throw new IllegalStateException(why + " (" + missing(entries) + " had not met the others)");
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("the niodev ranks did not meet within " + timeoutMillis / 1000.0
                            + " s: " + missing(entries) + " sent no ports to " + host() + ":" + port());
                }
                Socket s;
                try {
                    s = server.accept();
                } catch (SocketTimeoutException e) {
                    continue;
                }
                int rank = handshake(s, entries);
                sockets[rank] = s;
                met++;
            }
            StringBuilder table = new StringBuilder(PEER_TABLE);
            for (String e : entries) {
                table.append(';').append(e);
            }
            for (Socket s : sockets) {
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeUTF(table.toString());
                out.flush();
            }
            return table.toString();
        } finally {
            for (Socket s : sockets) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }

    /** Reads one rank's ports into its entry; closes the socket and fails on anything else. */
    private int handshake(Socket s, String[] entries) throws IOException {
        try {
            s.setSoTimeout(HANDSHAKE_MILLIS);
            DataInputStream in = new DataInputStream(s.getInputStream());
            String hello = in.readUTF();
            if (!hello.startsWith(HELLO)) {
                throw new IllegalStateException("a niodev rank sent '" + hello + "', not '" + HELLO + "'");
            }
            int wport = in.readInt();
            int rport = in.readInt();
            int rank = in.readInt();
            if (rank < 0 || rank >= ranks) {
                throw new IllegalStateException("a niodev rank says it is rank " + rank + " of " + ranks);
            }
            if (entries[rank] != null) {
                throw new IllegalStateException("two niodev processes say they are rank " + rank);
            }
            entries[rank] = entry(s.getInetAddress().getHostAddress(), rport, wport, rank);
            return rank;
        } catch (SocketTimeoutException e) {
            s.close();
            throw new IllegalStateException("a niodev rank connected but sent no ports within "
                    + HANDSHAKE_MILLIS / 1000 + " s");
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /**
     * @return one rank's entry of the peer table: {@code host@rport@wport@rank@debugport}, the debug port 0 as MPJRun
     *         writes it without {@code -debug}
     */
    static String entry(String host, int rport, int wport, int rank) {
        return host + "@" + rport + "@" + wport + "@" + rank + "@0";
    }

    private static String missing(String[] entries) {
        List<String> out = new ArrayList<>();
        for (int r = 0; r < entries.length; r++) {
            if (entries[r] == null) {
                out.add(Integer.toString(r));
            }
        }
        return (out.size() == 1 ? "rank " : "ranks ") + String.join(", ", out);
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
