package dev.gdasync.test.harness;

import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.swnic.SwNicConfig;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The scriptable peer process: opens a software NIC and runs one command per line of standard input,
 * answering each with one line, {@code OK [values]} or {@code ERR <message>}. Numbers are unsigned hex.
 * It exits when its standard input ends (so it never outlives the test that started it) or on EXIT.
 *
 * <p>Arguments: {@code job=<id> base=<dir> [rnrMs=<n>] [livenessMs=<n>]}. First line written:
 * {@code HELLO <pid> <process directory>}.
 *
 * <pre>
 * ALLOC region bytes                 -> OK address
 * FILL region off len seed           FILL the range with Payloads.pattern(seed)
 * WRITE region off hex               READ region off len -> OK hex
 * CRC region off len -> OK crc       GET64 region off -> OK v      SET64 region off v
 * REG mr region off len access       -> OK address length lkey rkey
 * DEREG mr
 * QP qp sendDepth recvDepth sendCqDepth -> OK endpoint
 * CONNECT qp endpoint
 * RECV qp wrId sge...                (sge = mr:off:len)
 * SEND qp opcode wrId flags imm raddr rkey compareAdd swap sge...
 * POLL qp SEND|RECV timeoutMs        -> OK NONE | OK wrId status opcode detail len imm hasImm qpn
 * STATUS qp -> OK state detail       CLOSEQP qp
 * SINK job qp mr count min max timeoutMs
 * SOURCE job qp mr count min max signalEvery timeoutMs
 * AWAIT job timeoutMs                -> OK ok errors status detail outstanding failure
 * CHURN n endpoint [raddr rkey mr len]  create and close n queue pairs (every other one connected;
 *                                   every fourth one with a plain-store-rung RDMA_WRITE in flight)
 * CLOSENIC   PING   EXIT
 * </pre>
 */
public final class ShmPeerMain {
    private ShmPeerMain() {
    }

    /**
     * @param args see the class comment
     * @throws IOException if standard input fails
     */
    public static void main(String[] args) throws IOException {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err); // nothing but answers on the protocol channel
        Map<String, String> opts = new HashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("arguments are key=value, got " + a);
            }
            opts.put(a.substring(0, eq), a.substring(eq + 1));
        }
        SwNicConfig cfg = SwNicConfig.defaults().withJobId(opts.get("job")).withShmBase(Path.of(opts.get("base")));
        if (opts.containsKey("rnrMs")) {
            cfg = cfg.withRnrTimeout(Duration.ofMillis(Long.parseLong(opts.get("rnrMs"))));
        }
        if (opts.containsKey("livenessMs")) {
            cfg = cfg.withLivenessInterval(Duration.ofMillis(Long.parseLong(opts.get("livenessMs"))));
        }
        LocalPeer peer = LocalPeer.open("child", cfg);
        out.println("HELLO " + Wire.hex(ProcessHandle.current().pid()) + " " + peer.nic().directory().processDirectory());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String reply;
            try {
                String r = execute(peer, line);
                reply = r.isEmpty() ? "OK" : "OK " + r;
            } catch (Throwable t) {
                reply = "ERR " + Wire.oneLine(t);
            }
            out.println(reply);
            if (line.equals("EXIT")) {
                break;
            }
        }
        // Standard input ended or EXIT: close cleanly, but never hang on the way out.
        Thread.ofPlatform().daemon().start(() -> {
            try {
                Thread.sleep(5_000);
            } catch (InterruptedException e) {
                // exit anyway
            }
            System.err.println("close took more than 5 s; halting");
            Runtime.getRuntime().halt(3);
        });
        peer.close();
        System.exit(0);
    }

    private static String execute(LocalPeer p, String line) {
        String[] f = line.split(" ");
        return switch (f[0]) {
            case "PING" -> "";
            case "EXIT" -> "";
            case "ALLOC" -> Wire.hex(p.alloc(f[1], Wire.num(f[2])));
            case "FILL" -> {
                p.fill(f[1], Wire.num(f[2]), Wire.num(f[3]), Wire.num(f[4]));
                yield "";
            }
            case "WRITE" -> {
                p.write(f[1], Wire.num(f[2]), Wire.bytes(f[3]));
                yield "";
            }
            case "READ" -> Wire.bytes(p.read(f[1], Wire.num(f[2]), (int) Wire.num(f[3])));
            case "CRC" -> Integer.toHexString(p.crc(f[1], Wire.num(f[2]), Wire.num(f[3])));
            case "GET64" -> Wire.hex(p.get64(f[1], Wire.num(f[2])));
            case "SET64" -> {
                p.set64(f[1], Wire.num(f[2]), Wire.num(f[3]));
                yield "";
            }
            case "REG" -> {
                Peer.MrInfo m = p.register(f[1], f[2], Wire.num(f[3]), Wire.num(f[4]), (int) Wire.num(f[5]));
                yield Wire.hex(m.address()) + " " + Wire.hex(m.length()) + " " + Wire.hex(m.lkey()) + " " + Wire.hex(m.rkey());
            }
            case "DEREG" -> {
                p.deregister(f[1]);
                yield "";
            }
            case "QP" -> p.createQp(f[1], new QueuePairConfig((int) Wire.num(f[2]), (int) Wire.num(f[3]),
                    (int) Wire.num(f[4]))).toHex();
            case "CONNECT" -> {
                p.connect(f[1], dev.gdasync.gdsync.nic.Endpoint.fromHex(f[2]));
                yield "";
            }
            case "RECV" -> {
                Peer.Sge[] sges = new Peer.Sge[f.length - 3];
                for (int i = 3; i < f.length; i++) {
                    sges[i - 3] = Peer.Sge.decode(f[i]);
                }
                p.postRecv(f[1], Wire.num(f[2]), sges);
                yield "";
            }
            case "SEND" -> {
                p.postSend(f[1], Peer.Wr.decode(f, 2));
                yield "";
            }
            case "POLL" -> {
                Peer.Cqe c = p.poll(f[1], Peer.Cq.valueOf(f[2]), Duration.ofMillis(Wire.num(f[3])));
                yield c == null ? "NONE" : c.encode();
            }
            case "STATUS" -> {
                Peer.QpStatus s = p.status(f[1]);
                yield s.state() + " " + s.detail();
            }
            case "CLOSEQP" -> {
                p.closeQp(f[1]);
                yield "";
            }
            case "SINK" -> {
                p.startSink(f[1], f[2], f[3], Wire.num(f[4]), (int) Wire.num(f[5]), (int) Wire.num(f[6]),
                        Duration.ofMillis(Wire.num(f[7])));
                yield "";
            }
            case "SOURCE" -> {
                p.startSource(f[1], f[2], f[3], Wire.num(f[4]), (int) Wire.num(f[5]), (int) Wire.num(f[6]),
                        (int) Wire.num(f[7]), Duration.ofMillis(Wire.num(f[8])));
                yield "";
            }
            case "AWAIT" -> {
                Traffic.Result r = p.awaitOrNull(f[1], Duration.ofMillis(Wire.num(f[2])));
                yield r == null ? "RUNNING" : r.encode();
            }
            case "CHURN" -> {
                // Creates and closes queue pairs, connecting every other one to an endpoint.
                // With "raddr rkey mr len", every fourth one first gets an RDMA_WRITE rung by a plain
                // store, and closes while the agent may still be running it.
                dev.gdasync.gdsync.nic.Endpoint ep = dev.gdasync.gdsync.nic.Endpoint.fromHex(f[2]);
                long n = Wire.num(f[1]);
                for (long i = 0; i < n; i++) {
                    dev.gdasync.gdsync.nic.QueuePair q = p.nic().createQueuePair(new QueuePairConfig(4, 4, 8));
                    if (i % 2 == 0) {
                        q.connect(ep);
                        if (f.length > 3 && i % 4 == 0) {
                            dev.gdasync.gdsync.nic.SendRequest r = q.prepareSend(new dev.gdasync.gdsync.nic.SendWorkRequest()
                                    .opcode(dev.gdasync.gdsync.nic.Opcode.RDMA_WRITE).flags(0)
                                    .remote(Wire.num(f[3]), Wire.num(f[4])).sge(p.mr(f[5]), 0, (int) Wire.num(f[6])));
                            r.expectPlainStoreRing();
                            r.doorbellRecord().set32(r.doorbellRecordValue(), true);
                            r.doorbell().set64(r.doorbellValue(), false);
                            long until = System.nanoTime() + (i / 4 % 16) * 10_000;
                            while (System.nanoTime() < until) {
                                Thread.onSpinWait();
                            }
                        }
                    }
                    q.close();
                }
                yield "";
            }
            case "CLOSENIC" -> {
                p.closeNic();
                yield "";
            }
            default -> throw new IllegalArgumentException("unknown command " + f[0]);
        };
    }
}
