package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.Opcode;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static dev.gdasync.gdsync.swnic.NicPair.awaitOne;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Memory registration: keys, access flags, bounds, deregistration taking effect at once. */
class RegistrationTest {
    @TempDir
    Path base;

    @Test
    void keysAreDistinctNonZeroAndUnpredictable() {
        try (SoftwareNic nic = SoftwareNic.open(NicPair.config(base))) {
            HostRegion r = nic.allocateHost(4096);
            Set<Long> keys = new HashSet<>();
            Set<Long> randomParts = new HashSet<>();
            for (int i = 0; i < 500; i++) {
                MemoryRegion mr = nic.register(r, Access.ALL);
                assertNotEquals(0, mr.lkey());
                assertNotEquals(mr.lkey(), mr.rkey());
                assertTrue(keys.add(mr.lkey()) && keys.add(mr.rkey()), "keys repeat");
                randomParts.add(mr.rkey() >>> 16);
                nic.deregister(mr);
            }
            // Every registration reused slot 0, yet no two rkeys share their 48 random bits.
            assertEquals(500, randomParts.size());
        }
    }

    @Test
    void aRegistrationDescribesItsRange() {
        try (SoftwareNic nic = SoftwareNic.open(NicPair.config(base))) {
            HostRegion r = nic.allocateHost(8192);
            MemoryRegion mr = nic.register(r, 4096, 1000, Access.LOCAL_WRITE | Access.REMOTE_READ);
            assertEquals(r.address() + 4096, mr.address());
            assertEquals(1000, mr.length());
            assertEquals(1000, mr.segment().byteSize());
            assertEquals(Access.LOCAL_WRITE | Access.REMOTE_READ, mr.access());
            assertTrue(mr.isValid());
            assertEquals(1, nic.registrations());
        }
    }

    @Test
    void badRegistrationsAreRefusedPrecisely() {
        try (SoftwareNic nic = SoftwareNic.open(NicPair.config(base)); SoftwareNic other = SoftwareNic.open(NicPair.config(base))) {
            HostRegion r = nic.allocateHost(4096);
            IllegalArgumentException noLocal = assertThrows(IllegalArgumentException.class,
                    () -> nic.register(r, Access.REMOTE_WRITE));
            assertTrue(noLocal.getMessage().contains("require LOCAL_WRITE"), noLocal.getMessage());
            assertThrows(IllegalArgumentException.class, () -> nic.register(r, 1 << 9));
            assertThrows(IllegalArgumentException.class, () -> nic.register(r, 0, 4097, Access.ALL));
            assertThrows(IllegalArgumentException.class, () -> nic.register(r, -1, 10, Access.ALL));
            assertThrows(IllegalArgumentException.class, () -> nic.register(r, 10, 0, Access.ALL));
            IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class,
                    () -> other.register(r, Access.ALL));
            assertTrue(foreign.getMessage().contains("not allocated by"), foreign.getMessage());
            assertEquals(0, nic.registrations());
            MemoryRegion mr = nic.register(r, Access.ALL);
            nic.deregister(mr);
            assertThrows(IllegalArgumentException.class, () -> nic.deregister(mr));
        }
    }

    @Test
    void aFullTableIsReportedAndFreedSlotsAreReused() {
        try (SoftwareNic nic = SoftwareNic.open(NicPair.config(base).withMrCapacity(3))) {
            HostRegion r = nic.allocateHost(4096);
            List<MemoryRegion> mrs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                mrs.add(nic.register(r, Access.ALL));
            }
            IllegalStateException full = assertThrows(IllegalStateException.class, () -> nic.register(r, Access.ALL));
            assertTrue(full.getMessage().contains("is full"), full.getMessage());
            nic.deregister(mrs.get(1));
            nic.register(r, Access.ALL);
        }
    }

    @Test
    void deregistrationInvalidatesBothKeysAtOnce() {
        try (NicPair p = new NicPair(base, 64 * 1024, Access.ALL, Access.ALL)) {
            MemoryRegion target = p.b.register(p.rb, 0, 4096, Access.ALL);
            p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.ma, 0, 8).remote(target.address(), target.rkey()));
            assertTrue(awaitOne(p.qa.sendCq()).isSuccess(), "the rkey works while registered");

            MemoryRegion local = p.a.register(p.ra, 0, 4096, Access.ALL);
            p.a.deregister(local);
            assertFalse(local.isValid());
            assertThrows(IllegalArgumentException.class,
                    () -> p.qa.postSend(new SendWorkRequest().sge(local, 0, 8)), "a deregistered lkey is refused at post");

            p.sb().set(JAVA_LONG, 0, 77);
            p.b.deregister(target);
            p.sa().set(JAVA_LONG, 0, 55);
            p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_WRITE).sge(p.ma, 0, 8).remote(target.address(), target.rkey()));
            Completion c = awaitOne(p.qa.sendCq());
            assertEquals(CompletionStatus.REM_ACCESS_ERR, c.status());
            assertEquals(ErrorDetail.BAD_RKEY, c.detail());
            assertEquals(77, p.sb().get(JAVA_LONG, 0), "nothing written through a deregistered rkey");
        }
    }

    @Test
    void closingARegionEndsItsRegistrations() {
        try (NicPair p = new NicPair(base, 4096, Access.ALL, Access.ALL)) {
            HostRegion extra = p.swB().allocateHost(4096);
            MemoryRegion mr = p.b.register(extra, Access.ALL);
            int before = p.swB().registrations();
            extra.close();
            assertEquals(before - 1, p.swB().registrations());
            assertFalse(mr.isValid());
            p.qa.postSend(new SendWorkRequest().opcode(Opcode.RDMA_READ).sge(p.ma, 0, 8).remote(mr.address(), mr.rkey()));
            assertEquals(ErrorDetail.BAD_RKEY, awaitOne(p.qa.sendCq()).detail());
        }
    }

    @Test
    void aReceiveIntoASecondRegistrationOfTheSameRegionWorks() {
        try (NicPair p = new NicPair(base, 8192, Access.ALL, Access.LOCAL_WRITE)) {
            MemoryRegion second = p.b.register(p.rb, 4096, 4096, Access.LOCAL_WRITE);
            p.sa().set(JAVA_LONG, 0, 4242);
            p.qb.postRecv(new RecvWorkRequest().sge(second, 8, 8));
            p.qa.postSend(new SendWorkRequest().sge(p.ma, 0, 8));
            assertTrue(awaitOne(p.qb.recvCq()).isSuccess());
            assertEquals(4242, p.sb().get(JAVA_LONG, 4096 + 8));
        }
    }
}
