package dev.gdasync.libmp;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.libmp.testutil.MpExerciseMain;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Descriptor queues posted as one batch, and KI export of requests into a descriptor table. */
class DescQueueAndKiTest {
    @TempDir
    Path base;

    @Test
    void aDescriptorQueueGoesToTheStreamAsOneBatch() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(8192);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            MemoryWord go = MemoryWord.word32(mem, 2048, "go");
            MemoryWord seen = MemoryWord.word32(mem, 2052, "seen");
            try (HostStream stream = HostStream.create("dq-" + mp.rank())) {
                if (mp.rank() == 0) {
                    MpRequest recv = mp.irecv(mem.asSlice(0, 8), peer, reg);
                    mem.set(JAVA_LONG, 1024, 11);
                    MpRequest send = mp.sendPrepare(mem.asSlice(1024, 8), peer, reg);
                    MpDescQueue dq = mp.descQueue()
                            .addWaitValue32(go, 1, WaitCondition.EQ)
                            .addSend(send)
                            .addWaitSend(send)
                            .addWaitRecv(recv)
                            .addWriteValue32(seen, 7);
                    assertEquals(5, dq.size());
                    assertEquals(RequestState.PREPARED, send.state(), "states change when the queue is posted");
                    assertThrows(IllegalArgumentException.class, () -> dq.addWaitRecv(send));
                    dq.postOnStream(stream);
                    assertEquals(0, dq.size());
                    assertEquals(RequestState.PENDING, send.state());
                    assertEquals(RequestState.PENDING, recv.state());
                    mp.barrier();
                    mem.set(JAVA_INT, 2048, 1);
                    stream.synchronize();
                    mp.waitAll(send, recv);
                    assertEquals(7, mem.get(JAVA_INT, 2052));
                    assertEquals(22, mem.get(JAVA_LONG, 0));
                } else {
                    MpRequest recv = mp.irecv(mem.asSlice(0, 8), peer, reg);
                    mp.barrier();
                    mp.wait(recv);
                    mem.set(JAVA_LONG, 1024, mem.get(JAVA_LONG, 0) * 2);
                    mp.wait(mp.isend(mem.asSlice(1024, 8), peer, reg));
                }
            }
        });
    }

    @Test
    void aKernelThreadRingsAndWaitsThroughTheExportedTable() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(8192);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            if (mp.rank() == 0) {
                MpRequest recv = mp.irecv(mem.asSlice(0, 8), peer, reg);
                mem.set(JAVA_LONG, 1024, 31);
                MpRequest send = mp.sendPrepare(mem.asSlice(1024, 8), peer, reg);
                MpKiExport ki = mp.kiExport();
                ki.addSend(send);
                ki.addWait(send);
                ki.addWait(recv);
                MemorySegment tableMem = mp.allocate(ki.byteSize());
                KiTable table = ki.writeTo(tableMem);
                assertEquals(RequestState.PENDING, send.state(), "rung and waited on by the kernel");
                assertEquals(RequestState.PENDING, recv.state());
                mp.barrier();
                Thread kernel = new Thread(() -> MpExerciseMain.runKernel(table));
                kernel.start();
                kernel.join();
                mp.waitAll(send, recv);
                assertEquals(62, mem.get(JAVA_LONG, 0));
            } else {
                MpRequest recv = mp.irecv(mem.asSlice(0, 8), peer, reg);
                mp.barrier();
                mp.wait(recv);
                mem.set(JAVA_LONG, 1024, mem.get(JAVA_LONG, 0) * 2);
                mp.wait(mp.isend(mem.asSlice(1024, 8), peer, reg));
            }
        });
    }

    @Test
    void aFailedTableWriteChangesNoRequest() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment mem = mp.allocate(4096);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            MpRequest send = mp.sendPrepare(mem.asSlice(0, 8), peer, reg);
            MpKiExport ki = mp.kiExport();
            ki.addSend(send);
            try (Arena arena = Arena.ofConfined()) {
                assertThrows(IllegalArgumentException.class, () -> ki.writeTo(arena.allocate(8, 8)));
            }
            assertEquals(RequestState.PREPARED, send.state());
            MpRequest recv = mp.irecv(mem.asSlice(8, 8), peer, reg);
            mp.barrier();
            try (HostStream stream = HostStream.create("ki-" + mp.rank())) {
                mp.isendPostOnStream(send, stream);
                stream.synchronize();
            }
            mp.waitAll(List.of(send, recv));
        });
    }
}
