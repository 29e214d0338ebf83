package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.*;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.*;

class SmokeTest {
    @Test
    void sendRecv() throws Exception {
        Path base = Files.createTempDirectory("gds");
        SwNicConfig cfg = SwNicConfig.defaults().withShmBase(base).withJobId("smoke");
        try (SoftwareNic a = SoftwareNic.open(cfg); SoftwareNic b = SoftwareNic.open(cfg)) {
            HostRegion ra = a.allocateHost(4096), rb = b.allocateHost(4096);
            MemoryRegion ma = a.register(ra, Access.ALL), mb = b.register(rb, Access.ALL);
            QueuePair qa = a.createQueuePair(QueuePairConfig.DEFAULT), qb = b.createQueuePair(QueuePairConfig.DEFAULT);
            qa.connect(qb.endpoint()); qb.connect(qa.endpoint());
            qb.postRecv(new RecvWorkRequest().wrId(7).sge(mb, 0, 64));
            ra.segment().set(ValueLayout.JAVA_LONG, 0, 0x1234567890L);
            qa.postSend(new SendWorkRequest().wrId(3).sge(ma, 0, 8));
            Completion c = new Completion();
            assertEquals(1, qa.sendCq().poll(c), "send cqe");
            assertTrue(c.isSuccess(), c.toString());
            assertEquals(1, qb.recvCq().poll(c));
            assertTrue(c.isSuccess(), c.toString());
            assertEquals(7, c.wrId());
            assertEquals(8, c.byteLength());
            assertEquals(0x1234567890L, rb.segment().get(ValueLayout.JAVA_LONG, 0));
        }
    }
}
