package dev.gdasync.libmp;

import dev.gdasync.gdsync.ki.KiTable;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.stream.HostStream;
import dev.gdasync.ki.exec.HostKiExecutor;
import dev.gdasync.ki.kernels.KiTemplateArgs;
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
                MpExerciseMain.runKernel(table, java.time.Duration.ofSeconds(30));
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
    void aTemplatedPutLandsWhereTheKernelChose() throws Exception {
        Ranks.run(2, base, mp -> {
            MemorySegment exposed = mp.allocate(16384);
            exposed.fill((byte) 0x33);
            MpWindow win = mp.windowCreate(exposed);
            MemorySegment mem = mp.allocate(8192);
            MpRegistration reg = mp.register(mem);
            int peer = 1 - mp.rank();
            for (int k = 0; k < 256; k++) {
                mem.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 4096 + k, (byte) (k ^ mp.rank()));
            }
            // Prepared with a placeholder: 8 bytes at displacement 0. The kernel picks the rest.
            MpRequest put = mp.putPrepare(mem.asSlice(0, 8), reg, peer, 0, win, 0);
            MpKiExport ki = mp.kiExport();
            assertEquals(0, ki.addTemplate(put));
            assertThrows(IllegalStateException.class, () -> ki.addSend(put), "one export per request");
            KiTable table = ki.writeTo(mp.allocate(ki.byteSize()));
            assertEquals(RequestState.PENDING_NOWAIT, put.state());
            mp.barrier();
            try (HostKiExecutor executor = HostKiExecutor.create("template-" + mp.rank())) {
                executor.sendTemplates(table, List.of(new KiTemplateArgs(mem.address() + 4096 + 16, 200, reg.lkey(),
                        win.remoteAddress(peer) + 1000, win.rkey(peer)))).join();
            }
            mp.wait(put);
            mp.barrier();
            for (int k = 0; k < 16384; k++) {
                byte want = k >= 1000 && k < 1200 ? (byte) ((k - 1000 + 16) ^ peer) : 0x33;
                assertEquals(want, exposed.get(java.lang.foreign.ValueLayout.JAVA_BYTE, k), "window byte " + k);
            }
            mp.windowDestroy(win);
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
