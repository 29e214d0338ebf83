package demo;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.nic.WaitRequest;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.gdsync.swnic.SoftwareNic;
import dev.gdasync.gdsync.swnic.SwNicConfig;
import dev.gdasync.libmp.bootstrap.EnvBootstrap;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Two ranks swap a message on the gdsync layer (libmp wraps these steps in isendOnStream and waitOnStream): a host
 * stream packs the message, rings the prepared send, waits for the peer's message and unpacks it.
 *
 * <pre>mprun -np 2 --classpath target/classes demo.GdsyncExchange</pre>
 */
public class GdsyncExchange {
    public static void main(String[] args) {
        try (EnvBootstrap boot = EnvBootstrap.fromEnvironment();
             SoftwareNic nic = SoftwareNic.open(SwNicConfig.defaults().withJobId(boot.jobId()));
             HostStream stream = HostStream.create("exchange")) {
            int peer = 1 - boot.rank();                              // run with 2 ranks
            HostRegion buf = nic.allocateHost(8192);                 // [0, 4096) goes out, [4096, 8192) comes in
            MemoryRegion mr = nic.register(buf, 0, buf.length(), Access.LOCAL_WRITE);
            QueuePair qp = nic.createQueuePair(QueuePairConfig.DEFAULT);
            List<byte[]> endpoints = boot.allGather(qp.endpoint().toBytes());
            qp.connect(Endpoint.of(endpoints.get(peer)));            // the peer's endpoint, through the bootstrap
            qp.postRecv(new RecvWorkRequest().wrId(1).sge(mr, 4096, 4096));
            WaitRequest arrived = qp.prepareWaitCq(qp.recvCq());     // prepared before the message exists
            SendRequest send = qp.prepareSend(new SendWorkRequest().wrId(2).sge(mr, 0, 64));

            MemorySegment mem = buf.segment();
            String[] got = new String[1];
            stream.launch(() -> mem.setString(0, "hello from rank " + boot.rank()));   // a "kernel" packs
            stream.post(List.of(new Descriptor.Send(send), new Descriptor.Wait(arrived)));
            stream.launch(() -> got[0] = mem.getString(4096));                        // runs after the peer's message
            stream.synchronize();
            System.out.println("rank " + boot.rank() + " got '" + got[0] + "'");
            boot.barrier();                                          // the peer is done with this NIC before it closes
        }
    }
}
