package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.*;
import dev.gdasync.gdsync.stream.HostStream;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class StreamSmokeTest {
    @Test
    void streamPingPong() throws Exception {
        Path base = Files.createTempDirectory("gds");
        SwNicConfig cfg = SwNicConfig.defaults().withShmBase(base).withJobId("smoke");
        try (SoftwareNic a = SoftwareNic.open(cfg); SoftwareNic b = SoftwareNic.open(cfg);
             HostStream sa = HostStream.create("a"); HostStream sb = HostStream.create("b")) {
            HostRegion ra = a.allocateHost(4096), rb = b.allocateHost(4096);
            MemoryRegion ma = a.register(ra, Access.ALL), mb = b.register(rb, Access.ALL);
            QueuePair qa = a.createQueuePair(QueuePairConfig.DEFAULT), qb = b.createQueuePair(QueuePairConfig.DEFAULT);
            qa.connect(qb.endpoint()); qb.connect(qa.endpoint());
            int n = 10;
            for (int i = 0; i < n; i++) {
                qa.postRecv(new RecvWorkRequest().wrId(100 + i).sge(ma, 2048, 64));
                qb.postRecv(new RecvWorkRequest().wrId(200 + i).sge(mb, 2048, 64));
                WaitRequest wa = qa.prepareWaitCq(qa.recvCq());
                SendRequest sA = qa.prepareSend(new SendWorkRequest().wrId(i).sge(ma, 0, 8));
                sa.post(List.of(new Descriptor.Send(sA), new Descriptor.Wait(wa)));
                WaitRequest wb = qb.prepareWaitCq(qb.recvCq());
                SendRequest sB = qb.prepareSend(new SendWorkRequest().wrId(i).sge(mb, 0, 8));
                sb.post(List.of(new Descriptor.Wait(wb), new Descriptor.Send(sB)));
            }
            sa.synchronize();
            sb.synchronize();
            Completion c = new Completion();
            for (int i = 0; i < n; i++) {
                assertEquals(1, qa.recvCq().poll(c), "a recv " + i + " " + qa);
                assertEquals(100 + i, c.wrId());
                assertEquals(1, qb.recvCq().poll(c), "b recv " + i);
                assertEquals(1, qa.sendCq().poll(c), "a send " + i);
                assertEquals(1, qb.sendCq().poll(c), "b send " + i);
            }
        }
    }
}
