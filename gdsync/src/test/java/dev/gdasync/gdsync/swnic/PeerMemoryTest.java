package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.MemoryRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** QueuePair.peerMemory over shared memory: the peer's registered bytes, mapped here, or null when not granted. */
class PeerMemoryTest {
    @TempDir
    Path base;

    private static final int RW = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;

    @Test
    void aKeyWithRemoteReadAndWriteGivesThePeersBytes() {
        try (NicPair p = new NicPair(base, 4096, RW, RW)) {
            MemorySegment there = p.qa.peerMemory(p.mb.rkey(), p.mb.address() + 64, 128);
            assertNotNull(there);
            assertEquals(128, there.byteSize());
            there.set(JAVA_LONG, 0, 0x1234_5678_9abcL);
            assertEquals(0x1234_5678_9abcL, p.rb.segment().get(JAVA_LONG, 64), "a store through it lands at the peer");
            p.rb.segment().set(JAVA_LONG, 72, 77);
            assertEquals(77, there.get(JAVA_LONG, 8), "a load through it sees the peer's store");
        }
    }

    @Test
    void outsideTheKeyUnknownKeysAndMissingAccessGiveNull() {
        try (NicPair p = new NicPair(base, 4096, RW, Access.LOCAL_WRITE | Access.REMOTE_WRITE)) {
            assertNull(p.qa.peerMemory(p.mb.rkey(), p.mb.address(), 8), "b's key grants no remote read");
            assertNull(p.qb.peerMemory(p.ma.rkey(), p.ma.address() + 4090, 8), "past the end of a's registration");
            assertNull(p.qb.peerMemory(p.ma.rkey(), p.ma.address() - 8, 8), "before its start");
            assertNull(p.qb.peerMemory(p.ma.rkey() ^ 0x5a5a_0000L, p.ma.address(), 8), "an unknown key");
            assertNull(p.qb.peerMemory(p.ma.rkey(), p.ma.address(), 0), "no bytes");
            MemoryRegion again = p.a.register(p.ra, RW);
            assertNotNull(p.qb.peerMemory(again.rkey(), again.address(), 4096));
            p.a.deregister(again);
            assertNull(p.qb.peerMemory(again.rkey(), again.address(), 8), "a deregistered key");
            p.qb.close();
            assertNull(p.qb.peerMemory(p.ma.rkey(), p.ma.address(), 8), "a closed queue pair");
        }
    }
}
