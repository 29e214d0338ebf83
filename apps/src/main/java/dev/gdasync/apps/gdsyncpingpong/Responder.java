package dev.gdasync.apps.gdsyncpingpong;

import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.stream.HostStream;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** The responder: started by the initiator, talks over stdin/stdout. */
final class Responder {
    private Responder() {
    }

    static void run(PingPongPlan plan) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Side s = new Side(plan.jobId(), plan.maxBytes(), plan.rings());
             HostStream stream = HostStream.create("responder")) {
            s.sendEndpoints(out);
            s.connect(in);
            StreamPinning.pin(StreamPinning.cpuFor(false, plan.pin()), stream);
            for (;;) {
                String cmd = GdsyncPingPong.readLine(in, "a command");
                if (cmd.equals("QUIT")) {
                    break;
                }
                // RUN ring bytes iters
                String[] f = cmd.split(" ");
                String ring = f[1];
                int bytes = Integer.parseInt(f[2]);
                int iters = Integer.parseInt(f[3]);
                s.setSize(bytes);
                QueuePair qp = s.qp(ring);
                qp.postRecv(s.recv);
                WaitRequest firstWait = ring.equals("stream") ? qp.prepareWaitCq(qp.recvCq()) : null;
                out.println("READY");
                if (ring.equals("cpu")) {
                    PingPongLoops.cpu(s, iters, false);
                } else {
                    PingPongLoops.stream(s, stream, iters, false, firstWait);
                }
                out.println("DONE");
            }
        }
    }
}
