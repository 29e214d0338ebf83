package dev.gdasync.test.harness;

import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.testutil.ChildProcess;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A {@link Peer} in a child JVM running {@link ShmPeerMain}: each operation is one command line and one
 * answer line. An {@code ERR} answer becomes a {@link PeerException}; no answer in time fails the test
 * with the child's output. Closing closes the child's standard input and reaps it.
 */
public final class RemotePeer implements Peer {
    /** Margin on top of a command's own timeout before the child is declared hung. */
    private static final Duration MARGIN = Duration.ofSeconds(20);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    /** How long the child may take to close its NIC and exit once its standard input ends. */
    private static final Duration EXIT_GRACE = Duration.ofSeconds(10);

    private final ChildProcess child;
    private final long pid;
    private final Path processDirectory;

    private RemotePeer(ChildProcess child, long pid, Path processDirectory) {
        this.child = child;
        this.pid = pid;
        this.processDirectory = processDirectory;
    }

    /**
     * Starts a child JVM with a software NIC.
     *
     * @param name  a name for messages
     * @param job   the job id
     * @param base  the shared-memory base directory
     * @param extra more {@code key=value} arguments (rnrMs, livenessMs)
     * @return the peer, its NIC open
     */
    public static RemotePeer start(String name, String job, Path base, String... extra) {
        return start(name, List.of(), job, base, extra);
    }

    /**
     * Starts a child JVM with extra JVM options and a software NIC.
     *
     * @param name       a name for messages
     * @param jvmOptions extra JVM options
     * @param job        the job id
     * @param base       the shared-memory base directory
     * @param extra      more {@code key=value} arguments (rnrMs, livenessMs)
     * @return the peer, its NIC open
     */
    public static RemotePeer start(String name, List<String> jvmOptions, String job, Path base, String... extra) {
        List<String> args = new ArrayList<>(List.of("job=" + job, "base=" + base));
        args.addAll(List.of(extra));
        ChildProcess child = ChildProcess.builder(name, ChildProcess.javaCommand(jvmOptions, ShmPeerMain.class, args))
                .keepStdinOpen(EXIT_GRACE).echoStderr().start();
        try {
            String hello = child.readLine(START_TIMEOUT);
            String[] f = hello.split(" ", 3);
            if (f.length != 3 || !f[0].equals("HELLO")) {
                fail("expected HELLO from " + name + ", got '" + hello + "': " + child.describe());
            }
            return new RemotePeer(child, Wire.num(f[1]), Path.of(f[2]));
        } catch (Throwable t) {
            child.close();
            throw t;
        }
    }

    /** @return the child process */
    public ChildProcess child() {
        return child;
    }

    /** @return the child's shared-memory process directory */
    public Path processDirectory() {
        return processDirectory;
    }

    /** Kills the child (SIGKILL) and reaps it. */
    public void kill() {
        child.kill();
        child.awaitExit(Duration.ofSeconds(20));
    }

    /**
     * Runs one command.
     *
     * @param command the command
     * @param timeout how long the command itself may take
     * @return the answer after "OK", possibly empty
     * @throws PeerException on an ERR answer
     */
    public String call(String command, Duration timeout) {
        String answer = child.request(command, timeout.plus(MARGIN));
        if (answer.equals("OK")) {
            return "";
        }
        if (answer.startsWith("OK ")) {
            return answer.substring(3);
        }
        if (answer.startsWith("ERR ")) {
            throw new PeerException(child.name() + ": '" + abbreviate(command) + "' failed: " + answer.substring(4), null);
        }
        return fail("unexpected answer '" + answer + "' to '" + abbreviate(command) + "' from " + child.describe());
    }

    private String call(String command) {
        return call(command, Duration.ZERO);
    }

    private static String abbreviate(String s) {
        return s.length() <= 160 ? s : s.substring(0, 160) + "...";
    }

    @Override
    public String name() {
        return child.name();
    }

    @Override
    public long pid() {
        return pid;
    }

    @Override
    public long alloc(String region, long bytes) {
        return Wire.num(call("ALLOC " + region + " " + Wire.hex(bytes)));
    }

    @Override
    public void fill(String region, long offset, long length, long seed) {
        call("FILL " + region + " " + Wire.hex(offset) + " " + Wire.hex(length) + " " + Wire.hex(seed));
    }

    @Override
    public void write(String region, long offset, byte[] data) {
        call("WRITE " + region + " " + Wire.hex(offset) + " " + Wire.bytes(data));
    }

    @Override
    public byte[] read(String region, long offset, int length) {
        return Wire.bytes(call("READ " + region + " " + Wire.hex(offset) + " " + Wire.hex(length)));
    }

    @Override
    public int crc(String region, long offset, long length) {
        return (int) Wire.num(call("CRC " + region + " " + Wire.hex(offset) + " " + Wire.hex(length)));
    }

    @Override
    public long get64(String region, long offset) {
        return Wire.num(call("GET64 " + region + " " + Wire.hex(offset)));
    }

    @Override
    public void set64(String region, long offset, long value) {
        call("SET64 " + region + " " + Wire.hex(offset) + " " + Wire.hex(value));
    }

    @Override
    public MrInfo register(String mr, String region, long offset, long length, int access) {
        String[] f = call("REG " + mr + " " + region + " " + Wire.hex(offset) + " " + Wire.hex(length) + " "
                + Wire.hex(access)).split(" ");
        return new MrInfo(Wire.num(f[0]), Wire.num(f[1]), Wire.num(f[2]), Wire.num(f[3]));
    }

    @Override
    public void deregister(String mr) {
        call("DEREG " + mr);
    }

    @Override
    public Endpoint createQp(String qp, QueuePairConfig c) {
        return Endpoint.fromHex(call("QP " + qp + " " + Wire.hex(c.sendDepth()) + " " + Wire.hex(c.recvDepth()) + " "
                + Wire.hex(c.sendCqDepth())));
    }

    @Override
    public void connect(String qp, Endpoint remote) {
        call("CONNECT " + qp + " " + remote.toHex());
    }

    @Override
    public void postRecv(String qp, long wrId, Sge... sges) {
        StringBuilder b = new StringBuilder("RECV ").append(qp).append(' ').append(Wire.hex(wrId));
        for (Sge s : sges) {
            b.append(' ').append(s.encode());
        }
        call(b.toString());
    }

    @Override
    public void postSend(String qp, Wr wr) {
        call("SEND " + qp + " " + wr.encode());
    }

    @Override
    public Cqe poll(String qp, Cq cq, Duration timeout) {
        String r = call("POLL " + qp + " " + cq + " " + Wire.hex(timeout.toMillis()), timeout);
        return r.equals("NONE") ? null : Cqe.decode(r.split(" "), 0);
    }

    @Override
    public QpStatus status(String qp) {
        String[] f = call("STATUS " + qp).split(" ");
        return new QpStatus(QpState.valueOf(f[0]), ErrorDetail.valueOf(f[1]));
    }

    @Override
    public void closeQp(String qp) {
        call("CLOSEQP " + qp);
    }

    @Override
    public void startSink(String job, String qp, String mr, long count, int minSize, int maxSize, Duration timeout) {
        call("SINK " + job + " " + qp + " " + mr + " " + Wire.hex(count) + " " + Wire.hex(minSize) + " "
                + Wire.hex(maxSize) + " " + Wire.hex(timeout.toMillis()));
    }

    @Override
    public void startSource(String job, String qp, String mr, long count, int minSize, int maxSize, int signalEvery,
                            Duration timeout) {
        call("SOURCE " + job + " " + qp + " " + mr + " " + Wire.hex(count) + " " + Wire.hex(minSize) + " "
                + Wire.hex(maxSize) + " " + Wire.hex(signalEvery) + " " + Wire.hex(timeout.toMillis()));
    }

    @Override
    public Traffic.Result await(String job, Duration timeout) {
        String r = call("AWAIT " + job + " " + Wire.hex(timeout.toMillis()), timeout);
        if (r.equals("RUNNING")) {
            throw new PeerException(name() + ": job '" + job + "' did not end within " + timeout.toMillis() + " ms", null);
        }
        return Traffic.Result.decode(r);
    }

    @Override
    public void closeNic() {
        call("CLOSENIC", Duration.ofSeconds(10));
    }

    /**
     * Asks the child to close its NIC and exit, and waits for it.
     *
     * @return the child's exit status
     */
    public int exit() {
        call("EXIT", Duration.ofSeconds(10));
        return child.awaitExit(Duration.ofSeconds(20));
    }

    @Override
    public void close() {
        child.close();
    }

    @Override
    public String toString() {
        return "RemotePeer{" + child + "}";
    }
}
