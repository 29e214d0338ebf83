package dev.gdasync.gdsync.swnic;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.concurrent.BackoffPolicy;
import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.Descriptors;
import dev.gdasync.gdsync.memop.BarrierScope;
import dev.gdasync.gdsync.memop.HostMemops;
import dev.gdasync.gdsync.memop.Memop;
import dev.gdasync.gdsync.memop.MemopBatch;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitPolicy;
import dev.gdasync.gdsync.memory.HostRegion;
import dev.gdasync.gdsync.memory.ShmDirectory;
import dev.gdasync.gdsync.nic.Access;
import dev.gdasync.gdsync.nic.Completion;
import dev.gdasync.gdsync.nic.CompletionOpcode;
import dev.gdasync.gdsync.nic.CompletionStatus;
import dev.gdasync.gdsync.nic.Endpoint;
import dev.gdasync.gdsync.nic.ErrorDetail;
import dev.gdasync.gdsync.nic.MemoryRegion;
import dev.gdasync.gdsync.nic.NicProviders;
import dev.gdasync.gdsync.nic.QpState;
import dev.gdasync.gdsync.nic.QueuePair;
import dev.gdasync.gdsync.nic.QueuePairConfig;
import dev.gdasync.gdsync.nic.RecvWorkRequest;
import dev.gdasync.gdsync.nic.ScatterGatherList;
import dev.gdasync.gdsync.nic.SendRequest;
import dev.gdasync.gdsync.nic.SendWorkRequest;
import dev.gdasync.gdsync.stream.Event;
import dev.gdasync.gdsync.stream.HostStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every public call of the NIC model (the software NIC, its queue pairs, work request builders, endpoints), of the
 * descriptors, of host streams and events and of the memops, walked with null, negative, zero, huge and
 * closed-object arguments: each must throw the documented exception with a message that names the parameter (a
 * null: exactly {@code "<parameter> must not be null"}) or the rule, and change nothing: queue entries, states,
 * registrations, shared-memory files, streams and their threads are compared before and after every case.
 */
@Timeout(120)
class ArgumentChecksTest {
    private static final int REGION = 1 << 16;

    @TempDir
    static Path base;
    static NicPair p;
    static QueuePair fresh;
    static QueuePair closedQp;
    static QueuePair q2a;
    static QueuePair q2b;
    static SendRequest prepared;
    static SoftwareNic closedNic;
    static HostRegion closedRegion;
    static MemoryRegion deregistered;
    static HostStream stream;
    static HostStream closedStream;
    static Arena arena;
    static MemorySegment words;
    static MemoryWord w32;
    static MemoryWord w64;

    @BeforeAll
    static void setUp() {
        p = new NicPair(base, REGION, Access.ALL, Access.ALL);
        fresh = p.a.createQueuePair(QueuePairConfig.DEFAULT);
        closedQp = p.a.createQueuePair(QueuePairConfig.DEFAULT);
        closedQp.close();
        q2a = p.a.createQueuePair(QueuePairConfig.DEFAULT);
        q2b = p.b.createQueuePair(QueuePairConfig.DEFAULT);
        q2a.connect(q2b.endpoint());
        q2b.connect(q2a.endpoint());
        prepared = q2a.prepareSend(new SendWorkRequest().sge(p.ma, 0, 8));
        closedNic = SoftwareNic.open(NicPair.config(base));
        closedNic.close();
        closedRegion = p.swA().allocateHost(4096);
        closedRegion.close();
        deregistered = p.a.register(p.ra, 0, 64, Access.ALL);
        p.a.deregister(deregistered);
        stream = HostStream.create("args");
        closedStream = HostStream.create("args-closed");
        closedStream.close();
        arena = Arena.ofShared();
        words = arena.allocate(64, 8);
        w32 = MemoryWord.word32(words, 0, "w32");
        w64 = MemoryWord.word64(words, 8, "w64");
    }

    @AfterAll
    static void tearDown() {
        if (stream != null) {
            stream.close();
        }
        if (p != null) {
            p.close();
        }
        if (arena != null) {
            arena.close();
        }
    }

    // ---- the table ----

    /**
     * One row: the method (as {@code Class.name(ParameterTypes)}, which the completeness check matches against
     * reflection), the bad argument, the call, and what it must throw.
     */
    record Case(String method, String argument, Executable call, Class<? extends Throwable> type, String message) {
        @Override
        public String toString() {
            return method + " with " + argument;
        }
    }

    private static Case nul(String method, String parameter, Executable call) {
        return new Case(method, parameter + " = null", call, NullPointerException.class, parameter + " must not be null");
    }

    private static Case bad(String method, String argument, Executable call, Class<? extends Throwable> type, String message) {
        return new Case(method, argument, call, type, message);
    }

    static List<Case> cases() {
        List<Case> c = new ArrayList<>();
        SendWorkRequest ok8 = new SendWorkRequest().sge(p.ma, 0, 8);
        Descriptor.WriteValue32 write = new Descriptor.WriteValue32(w32, 1, 0);
        Memop.Write32 op = new Memop.Write32(w32, 1, false);
        BackoffIdler idler = new BackoffIdler(BackoffPolicy.LOW_LATENCY);
        WaitPolicy policy = WaitPolicy.lowLatency(Duration.ofSeconds(1));
        Duration huge = Duration.ofSeconds(Long.MAX_VALUE);

        // SoftwareNic
        c.add(nul("SoftwareNic.open(SwNicConfig)", "config", () -> SoftwareNic.open(null)));
        c.add(bad("SoftwareNic.allocateHost(long)", "0", () -> p.swA().allocateHost(0), IllegalArgumentException.class,
                "region length must be > 0, got 0"));
        c.add(bad("SoftwareNic.allocateHost(long)", "-1", () -> p.swA().allocateHost(-1), IllegalArgumentException.class,
                "region length must be > 0, got -1"));
        c.add(bad("SoftwareNic.allocateHost(long)", "Long.MAX_VALUE", () -> p.swA().allocateHost(Long.MAX_VALUE),
                IllegalArgumentException.class, Long.MAX_VALUE + " bytes is too large"));
        c.add(bad("SoftwareNic.allocateHost(long)", "MAX_LENGTH (more than the free space)",
                () -> p.swA().allocateHost(ShmDirectory.MAX_LENGTH), UncheckedIOException.class, "bytes free"));
        c.add(bad("SoftwareNic.allocateHost(long)", "a closed NIC", () -> closedNic.allocateHost(4096),
                IllegalStateException.class, "is closed"));
        c.add(nul("SoftwareNic.allocateDevice(CudaContext,long)", "context", () -> p.swA().allocateDevice(null, 4096)));
        c.add(nul("SoftwareNic.awaitPeers(long,BooleanSupplier)", "ready", () -> p.a.awaitPeers(1_000, null)));
        c.add(bad("SoftwareNic.awaitPeers(long,BooleanSupplier)", "0 ns", () -> p.a.awaitPeers(0, () -> true),
                IllegalArgumentException.class, "nanos must be positive, got 0"));
        c.add(nul("SoftwareNic.register(Region,long,long,int)", "region", () -> p.a.register(null, 0, 8, Access.ALL)));
        c.add(nul("SoftwareNic.register(Region,int)", "region", () -> p.a.register(null, Access.ALL)));
        c.add(bad("SoftwareNic.register(Region,long,long,int)", "offset -1", () -> p.a.register(p.ra, -1, 8, Access.ALL),
                IllegalArgumentException.class, "range [-1, +8) is not inside"));
        c.add(bad("SoftwareNic.register(Region,long,long,int)", "length 0", () -> p.a.register(p.ra, 0, 0, Access.ALL),
                IllegalArgumentException.class, "a registration needs at least one byte, got length 0"));
        c.add(bad("SoftwareNic.register(Region,long,long,int)", "length -8", () -> p.a.register(p.ra, 0, -8, Access.ALL),
                IllegalArgumentException.class, "got length -8"));
        c.add(bad("SoftwareNic.register(Region,long,long,int)", "length Long.MAX_VALUE",
                () -> p.a.register(p.ra, 8, Long.MAX_VALUE, Access.ALL), IllegalArgumentException.class, "is not inside"));
        c.add(bad("SoftwareNic.register(Region,long,long,int)", "offset Long.MAX_VALUE",
                () -> p.a.register(p.ra, Long.MAX_VALUE, 8, Access.ALL), IllegalArgumentException.class, "is not inside"));
        c.add(bad("SoftwareNic.register(Region,long,long,int)", "unknown access bits",
                () -> p.a.register(p.ra, 0, 8, 1 << 9), IllegalArgumentException.class, "unknown access bits 0x200"));
        c.add(bad("SoftwareNic.register(Region,long,long,int)", "another NIC's region",
                () -> p.a.register(p.rb, 0, 8, Access.ALL), IllegalArgumentException.class, "was not allocated by"));
        c.add(bad("SoftwareNic.register(Region,int)", "a closed region", () -> p.a.register(closedRegion, Access.ALL),
                IllegalArgumentException.class, "is closed"));
        c.add(bad("SoftwareNic.register(Region,long,long,int)", "a closed NIC",
                () -> closedNic.register(p.ra, 0, 8, Access.ALL), IllegalStateException.class, "is closed"));
        c.add(nul("SoftwareNic.deregister(MemoryRegion)", "mr", () -> p.a.deregister(null)));
        c.add(bad("SoftwareNic.deregister(MemoryRegion)", "another NIC's registration", () -> p.a.deregister(p.mb),
                IllegalArgumentException.class, "is not a memory region of"));
        c.add(bad("SoftwareNic.deregister(MemoryRegion)", "a deregistered one", () -> p.a.deregister(deregistered),
                IllegalArgumentException.class, "is not registered"));
        c.add(nul("SoftwareNic.createQueuePair(QueuePairConfig)", "qpConfig", () -> p.a.createQueuePair(null)));
        c.add(bad("SoftwareNic.createQueuePair(QueuePairConfig)", "a closed NIC",
                () -> closedNic.createQueuePair(QueuePairConfig.DEFAULT), IllegalStateException.class, "is closed"));

        // shared-memory directories and host regions
        ShmDirectory dir = p.swA().directory();
        c.add(nul("ShmDirectory.open(String)", "jobId", () -> ShmDirectory.open(null)));
        c.add(nul("ShmDirectory.removeDeadProcess(Path,long,long)", "processDirectory",
                () -> ShmDirectory.removeDeadProcess(null, 1, 1)));
        c.add(nul("SoftwareNic.addAgentDuty(AgentDuty)", "duty", () -> p.swA().addAgentDuty(null)));
        c.add(nul("SoftwareNic.removeAgentDuty(AgentDuty)", "duty", () -> p.swA().removeAgentDuty(null)));
        c.add(nul("QueuePair.abort(ErrorDetail)", "reason", () -> p.qa.abort(null)));
        c.add(nul("ShmDirectory.open(Path,String)", "base", () -> ShmDirectory.open(null, "j")));
        c.add(bad("ShmDirectory.open(Path,String)", "a job id that is a path", () -> ShmDirectory.open(base, "../x"),
                IllegalArgumentException.class, "job id must match [A-Za-z0-9_.-]{1,64}, got '../x'"));
        c.add(nul("ShmDirectory.userRoot(Path)", "base", () -> ShmDirectory.userRoot(null)));
        c.add(nul("ShmDirectory.cleanStale(Path)", "root", () -> ShmDirectory.cleanStale(null)));
        c.add(nul("ShmDirectory.createFile(String,long,Arena)", "name", () -> dir.createFile(null, 64, arena)));
        c.add(nul("ShmDirectory.createFile(String,long,Arena)", "arena", () -> dir.createFile("f", 64, null)));
        c.add(bad("ShmDirectory.createFile(String,long,Arena)", "a path as the name", () -> dir.createFile("../f", 64, arena),
                IllegalArgumentException.class, "name must be a plain file name, got '../f'"));
        c.add(bad("ShmDirectory.createFile(String,long,Arena)", "size 0", () -> dir.createFile("f", 0, arena),
                IllegalArgumentException.class, "file size must be > 0, got 0"));
        c.add(bad("ShmDirectory.createFile(String,long,Arena)", "size Long.MAX_VALUE",
                () -> dir.createFile("f", Long.MAX_VALUE, arena), UncheckedIOException.class, "bytes free"));
        c.add(bad("ShmDirectory.createFile(String,long,Arena)", "an existing name", () -> dir.createFile("node", 64, arena),
                UncheckedIOException.class, "already exists"));
        c.add(nul("ShmDirectory.file(String)", "name", () -> dir.file(null)));
        c.add(bad("ShmDirectory.file(String)", "..", () -> dir.file(".."), IllegalArgumentException.class,
                "name must be a plain file name, got '..'"));
        c.add(nul("ShmDirectory.mapExisting(Path,boolean,Arena)", "path", () -> ShmDirectory.mapExisting(null, true, arena)));
        c.add(nul("ShmDirectory.mapExisting(Path,boolean,Arena)", "arena",
                () -> ShmDirectory.mapExisting(p.hostA().path(), true, null)));
        c.add(bad("ShmDirectory.mapExisting(Path,boolean,Arena)", "a missing file",
                () -> ShmDirectory.mapExisting(dir.file("missing"), false, arena), UncheckedIOException.class, "could not map"));
        c.add(nul("HostRegion.addCloseListener(Runnable)", "listener", () -> p.hostA().addCloseListener(null)));

        // QueuePair (SwQueuePair)
        c.add(nul("QueuePair.connect(Endpoint)", "remote", () -> fresh.connect(null)));
        c.add(bad("QueuePair.connect(Endpoint)", "a malformed endpoint", () -> fresh.connect(Endpoint.of(new byte[] {1, 2, 3})),
                IllegalArgumentException.class, "endpoint descriptor"));
        c.add(bad("QueuePair.connect(Endpoint)", "its own endpoint", () -> fresh.connect(fresh.endpoint()),
                IllegalArgumentException.class, "cannot connect to itself"));
        c.add(bad("QueuePair.connect(Endpoint)", "a connected queue pair", () -> p.qa.connect(p.qb.endpoint()),
                IllegalStateException.class, "is already connected"));
        c.add(bad("QueuePair.connect(Endpoint)", "a closed queue pair", () -> closedQp.connect(p.qb.endpoint()),
                IllegalStateException.class, "is closed"));
        c.add(nul("QueuePair.postSend(SendWorkRequest)", "wr", () -> p.qa.postSend(null)));
        c.add(bad("QueuePair.postSend(SendWorkRequest)", "offset -8", () -> p.qa.postSend(new SendWorkRequest().sge(p.ma, -8, 8)),
                IllegalArgumentException.class, "is outside"));
        c.add(bad("QueuePair.postSend(SendWorkRequest)", "a buffer past the region",
                () -> p.qa.postSend(new SendWorkRequest().sge(p.ma, REGION, 1)), IllegalArgumentException.class, "is outside"));
        c.add(bad("QueuePair.postSend(SendWorkRequest)", "a closed queue pair", () -> closedQp.postSend(ok8),
                IllegalStateException.class, "is closed"));
        c.add(bad("QueuePair.postSend(SendWorkRequest)", "an unconnected queue pair", () -> fresh.postSend(ok8),
                IllegalStateException.class, "is not connected"));
        c.add(nul("QueuePair.postRecv(RecvWorkRequest)", "wr", () -> p.qb.postRecv(null)));
        c.add(bad("QueuePair.postRecv(RecvWorkRequest)", "a buffer past the region",
                () -> p.qb.postRecv(new RecvWorkRequest().sge(p.mb, REGION, 1)), IllegalArgumentException.class, "outside"));
        c.add(bad("QueuePair.postRecv(RecvWorkRequest)", "a closed queue pair",
                () -> closedQp.postRecv(new RecvWorkRequest().sge(p.ma, 0, 8)), IllegalStateException.class, "is closed"));
        c.add(nul("QueuePair.prepareSend(SendWorkRequest)", "wr", () -> p.qa.prepareSend(null)));
        c.add(bad("QueuePair.prepareSend(SendWorkRequest)", "a buffer past the region",
                () -> p.qa.prepareSend(new SendWorkRequest().sge(p.ma, REGION - 4, 8)), IllegalArgumentException.class,
                "is outside"));
        c.add(bad("QueuePair.prepareSend(SendWorkRequest)", "a closed queue pair", () -> closedQp.prepareSend(ok8),
                IllegalStateException.class, "is closed"));
        c.add(nul("QueuePair.prepareWaitCq(CompletionQueue)", "cq", () -> p.qa.prepareWaitCq(null)));
        c.add(bad("QueuePair.prepareWaitCq(CompletionQueue)", "another queue pair's CQ", () -> p.qa.prepareWaitCq(p.qb.sendCq()),
                IllegalArgumentException.class, "is not a completion queue of queue pair"));
        c.add(bad("QueuePair.prepareWaitCq(CompletionQueue)", "a CQ with no outstanding work",
                () -> p.qa.prepareWaitCq(p.qa.sendCq()), IllegalStateException.class, "cannot prepare a wait"));

        // work requests, scatter-gather lists, endpoints, completions, providers, settings
        c.add(nul("SendWorkRequest.opcode(Opcode)", "opcode", () -> new SendWorkRequest().opcode(null)));
        c.add(nul("SendWorkRequest.sge(MemoryRegion,long,int)", "mr", () -> new SendWorkRequest().sge(null, 0, 8)));
        c.add(bad("SendWorkRequest.sge(MemoryRegion,long,int)", "length -1", () -> new SendWorkRequest().sge(p.ma, 0, -1),
                IllegalArgumentException.class, "buffer length must be >= 0, got -1"));
        c.add(bad("SendWorkRequest.sge(long,int,long)", "length Integer.MIN_VALUE",
                () -> new SendWorkRequest().sge(p.ma.address(), Integer.MIN_VALUE, p.ma.lkey()), IllegalArgumentException.class,
                "buffer length must be >= 0, got " + Integer.MIN_VALUE));
        c.add(bad("SendWorkRequest.sge(long,int,long)", "a ninth buffer", () -> {
            SendWorkRequest wr = new SendWorkRequest();
            for (int i = 0; i < 9; i++) {
                wr.sge(p.ma, 0, 8);
            }
        }, IllegalStateException.class, "at most 8 buffers"));
        c.add(nul("RecvWorkRequest.sge(MemoryRegion,long,int)", "mr", () -> new RecvWorkRequest().sge(null, 0, 8)));
        c.add(bad("RecvWorkRequest.sge(MemoryRegion,long,int)", "length -1", () -> new RecvWorkRequest().sge(p.mb, 0, -1),
                IllegalArgumentException.class, "buffer length must be >= 0, got -1"));
        c.add(nul("ScatterGatherList.add(MemoryRegion,long,int)", "mr", () -> new ScatterGatherList().add(null, 0, 8)));
        c.add(bad("ScatterGatherList.add(long,int,long)", "length -1", () -> new ScatterGatherList().add(0, -1, 0),
                IllegalArgumentException.class, "buffer length must be >= 0, got -1"));
        c.add(nul("Endpoint.of(byte[])", "bytes", () -> Endpoint.of(null)));
        c.add(bad("Endpoint.of(byte[])", "no bytes", () -> Endpoint.of(new byte[0]), IllegalArgumentException.class,
                "cannot be empty"));
        c.add(nul("Endpoint.fromHex(String)", "hex", () -> Endpoint.fromHex(null)));
        c.add(bad("Endpoint.fromHex(String)", "not hexadecimal", () -> Endpoint.fromHex("zz"), IllegalArgumentException.class,
                "an endpoint must be hexadecimal, got 'zz'"));
        c.add(nul("Completion.set(long,CompletionStatus,CompletionOpcode,ErrorDetail,int,int,boolean,int,long)", "status",
                () -> new Completion().set(1, null, CompletionOpcode.SEND, ErrorDetail.NONE, 0, 0, false, 0, 0)));
        c.add(nul("Completion.set(long,CompletionStatus,CompletionOpcode,ErrorDetail,int,int,boolean,int,long)", "opcode",
                () -> new Completion().set(1, CompletionStatus.SUCCESS, null, ErrorDetail.NONE, 0, 0, false, 0, 0)));
        c.add(nul("Completion.set(long,CompletionStatus,CompletionOpcode,ErrorDetail,int,int,boolean,int,long)", "detail",
                () -> new Completion().set(1, CompletionStatus.SUCCESS, CompletionOpcode.SEND, null, 0, 0, false, 0, 0)));
        c.add(nul("NicProviders.named(String)", "name", () -> NicProviders.named(null)));
        c.add(bad("NicProviders.named(String)", "an unknown name", () -> NicProviders.named("nope"),
                IllegalArgumentException.class, "no NIC provider named 'nope'"));
        c.add(nul("NicProviders.open(NicConfig)", "config", () -> NicProviders.open(null)));
        c.add(nul("SwNicProvider.open(NicConfig)", "config", () -> new SwNicProvider().open(null)));
        c.add(bad("QueuePairConfig.new(int,int,int)", "sendDepth 0", () -> new QueuePairConfig(0, 2, 2),
                IllegalArgumentException.class, "sendDepth must be a power of two in [2, 65536], got 0"));
        c.add(bad("QueuePairConfig.new(int,int,int)", "recvDepth -2", () -> new QueuePairConfig(2, -2, 2),
                IllegalArgumentException.class, "recvDepth must be a power of two in [2, 65536], got -2"));
        c.add(bad("QueuePairConfig.new(int,int,int)", "sendCqDepth 2^30", () -> new QueuePairConfig(2, 2, 1 << 30),
                IllegalArgumentException.class, "sendCqDepth must be a power of two in [2, 65536], got " + (1 << 30)));
        SwNicConfig sw = NicPair.config(base);
        c.add(nul("SwNicConfig.withJobId(String)", "jobId", () -> sw.withJobId(null)));
        c.add(nul("SwNicConfig.withShmBase(Path)", "shmBase", () -> sw.withShmBase(null)));
        c.add(nul("SwNicConfig.withRnrTimeout(Duration)", "rnrTimeout", () -> sw.withRnrTimeout(null)));
        c.add(bad("SwNicConfig.withRnrTimeout(Duration)", "zero", () -> sw.withRnrTimeout(Duration.ZERO),
                IllegalArgumentException.class, "rnrTimeout must be positive, got PT0S"));
        c.add(bad("SwNicConfig.withRnrTimeout(Duration)", "Long.MAX_VALUE s", () -> sw.withRnrTimeout(huge),
                IllegalArgumentException.class, "rnrTimeout must be at most"));
        c.add(nul("SwNicConfig.withLivenessInterval(Duration)", "livenessInterval", () -> sw.withLivenessInterval(null)));
        c.add(bad("SwNicConfig.withLivenessInterval(Duration)", "-1 ms",
                () -> sw.withLivenessInterval(Duration.ofMillis(-1)), IllegalArgumentException.class,
                "livenessInterval must be positive"));
        c.add(bad("SwNicConfig.withMrCapacity(int)", "0", () -> sw.withMrCapacity(0), IllegalArgumentException.class,
                "mrCapacity must be in [1, "));
        c.add(bad("SwNicConfig.withMrCapacity(int)", "Integer.MAX_VALUE", () -> sw.withMrCapacity(Integer.MAX_VALUE),
                IllegalArgumentException.class, "mrCapacity must be in [1, "));
        c.add(nul("SwNicConfig.withTransport(Transport)", "transport", () -> sw.withTransport(null)));
        c.add(nul("SwNicConfig.new(String,Path,Duration,Duration,int,BackoffPolicy,BackoffPolicy,Transport,int)", "agentIdle",
                () -> new SwNicConfig("j", base, Duration.ofSeconds(1), Duration.ofMillis(20), 16, null,
                        BackoffPolicy.BACKGROUND, Transport.SHM, 64)));
        c.add(bad("SwNicConfig.withKeyBits(int)", "48", () -> sw.withKeyBits(48), IllegalArgumentException.class,
                "keyBits must be 32 or 64, got 48"));
        c.add(bad("Access.validate(int)", "REMOTE_WRITE without LOCAL_WRITE", () -> Access.validate(Access.REMOTE_WRITE),
                IllegalArgumentException.class, "require LOCAL_WRITE"));

        // descriptors
        c.add(nul("Send.new(SendRequest)", "request", () -> new Descriptor.Send(null)));
        c.add(nul("Wait.new(WaitRequest)", "request", () -> new Descriptor.Wait(null)));
        c.add(nul("WaitValue32.new(MemoryWord,int,WaitCondition,int,WaitProgress)", "word",
                () -> new Descriptor.WaitValue32(null, 1, WaitCondition.EQ, 0, null)));
        c.add(nul("WaitValue32.new(MemoryWord,int,WaitCondition,int)", "condition",
                () -> new Descriptor.WaitValue32(w32, 1, null, 0)));
        c.add(bad("WaitValue32.new(MemoryWord,int,WaitCondition,int)", "a 64-bit word",
                () -> new Descriptor.WaitValue32(w64, 1, WaitCondition.EQ, 0), IllegalArgumentException.class,
                "WAIT_VALUE32 needs a 32-bit word"));
        c.add(bad("WaitValue32.new(MemoryWord,int,WaitCondition,int)", "flags -1",
                () -> new Descriptor.WaitValue32(w32, 1, WaitCondition.EQ, -1), IllegalArgumentException.class,
                "WAIT_VALUE32 does not take flags"));
        c.add(nul("WriteValue32.new(MemoryWord,int,int)", "word", () -> new Descriptor.WriteValue32(null, 1, 0)));
        c.add(nul("WriteMemory.new(MemorySegment,long,byte[],int)", "target",
                () -> new Descriptor.WriteMemory(null, 0, new byte[4], 0)));
        c.add(nul("WriteMemory.new(MemorySegment,long,byte[],int)", "data", () -> new Descriptor.WriteMemory(words, 0, null, 0)));
        c.add(bad("WriteMemory.new(MemorySegment,long,byte[],int)", "offset -1",
                () -> new Descriptor.WriteMemory(words, -1, new byte[4], 0), IndexOutOfBoundsException.class, "at offset -1"));
        c.add(bad("WriteMemory.new(MemorySegment,long,byte[],int)", "offset Long.MAX_VALUE",
                () -> new Descriptor.WriteMemory(words, Long.MAX_VALUE, new byte[4], 0), IndexOutOfBoundsException.class,
                "does not fit"));
        c.add(bad("WriteMemory.new(MemorySegment,long,byte[],int)", "257 bytes",
                () -> new Descriptor.WriteMemory(words, 0, new byte[257], 0), IllegalArgumentException.class,
                "carries at most 256 bytes, got 257"));
        c.add(nul("Descriptors.translate(List)", "descriptors", () -> Descriptors.translate(null)));
        c.add(bad("Descriptors.translate(List)", "a null element", () -> Descriptors.translate(Arrays.asList(write, null)),
                NullPointerException.class, "descriptors[1] must not be null"));
        c.add(nul("Descriptors.post(List,SendExecutor)", "descriptors", () -> Descriptors.post(null, Descriptors.CPU)));
        c.add(nul("Descriptors.post(List,SendExecutor)", "executor", () -> Descriptors.post(List.of(write), null)));
        c.add(bad("Descriptors.post(List,SendExecutor)", "a null after a send",
                () -> Descriptors.post(Arrays.asList(new Descriptor.Send(prepared), null), Descriptors.CPU),
                NullPointerException.class, "descriptors[1] must not be null"));
        c.add(nul("Descriptors.checkPost(List,SendExecutor)", "descriptors", () -> Descriptors.checkPost(null, stream)));
        c.add(nul("Descriptors.checkPost(List,SendExecutor)", "executor", () -> Descriptors.checkPost(List.of(write), null)));
        c.add(nul("Descriptors.markPosted(List,SendExecutor)", "descriptors", () -> Descriptors.markPosted(null, stream)));
        c.add(nul("Descriptors.markPosted(List,SendExecutor)", "executor",
                () -> Descriptors.markPosted(List.of(new Descriptor.Send(prepared)), null)));
        c.add(nul("Descriptors.postOnCpu(List,WaitPolicy)", "descriptors", () -> Descriptors.postOnCpu(null, policy)));
        c.add(nul("Descriptors.postOnCpu(List,WaitPolicy)", "policy",
                () -> Descriptors.postOnCpu(List.of(new Descriptor.Send(prepared)), null)));

        // streams and events
        c.add(nul("HostStream.create(String)", "name", () -> HostStream.create(null)));
        c.add(nul("HostStream.create(String,WaitPolicy)", "name", () -> HostStream.create(null, policy)));
        c.add(nul("HostStream.create(String,WaitPolicy)", "policy", () -> HostStream.create("x", null)));
        c.add(nul("HostStream.post(MemopBatch)", "batch", () -> stream.post((MemopBatch) null)));
        c.add(nul("HostStream.post(List)", "descriptors", () -> stream.post((List<Descriptor>) null)));
        c.add(bad("HostStream.post(List)", "a null after a send",
                () -> stream.post(Arrays.asList(new Descriptor.Send(prepared), null)), NullPointerException.class,
                "descriptors[1] must not be null"));
        c.add(nul("HostStream.launch(Runnable)", "task", () -> stream.launch(null)));
        c.add(nul("HostStream.waitEvent(Event)", "event", () -> stream.waitEvent(null)));
        c.add(nul("HostStream.abort(Throwable)", "why", () -> stream.abort(null)));
        c.add(bad("HostStream.post(MemopBatch)", "a closed stream", () -> closedStream.post(MemopBatch.of(op)),
                IllegalStateException.class, "stream 'args-closed' is closed"));
        c.add(bad("HostStream.post(List)", "a closed stream", () -> closedStream.post(List.of(new Descriptor.Send(prepared))),
                IllegalStateException.class, "stream 'args-closed' is closed"));
        c.add(bad("HostStream.launch(Runnable)", "a closed stream", () -> closedStream.launch(() -> { }),
                IllegalStateException.class, "stream 'args-closed' is closed"));
        c.add(bad("HostStream.waitEvent(Event)", "a closed stream",
                () -> closedStream.waitEvent(Event.pending("other").event()), IllegalStateException.class,
                "stream 'args-closed' is closed"));
        c.add(nul("Event.pending(String)", "stream", () -> Event.pending(null)));
        c.add(nul("Completer.fail(Throwable)", "cause", () -> Event.pending("s").fail(null)));
        c.add(nul("Event.whenDone(Runnable)", "listener", () -> Event.pending("s").event().whenDone(null)));
        c.add(nul("Event.synchronize(Duration)", "timeout", () -> Event.pending("s").event().synchronize(null)));

        // memops
        c.add(nul("Write32.new(MemoryWord,int,boolean)", "target", () -> new Memop.Write32(null, 1, false)));
        c.add(bad("Write32.new(MemoryWord,int,boolean)", "a 64-bit word", () -> new Memop.Write32(w64, 1, false),
                IllegalArgumentException.class, "WRITE32 needs a 32-bit word"));
        c.add(nul("Write64.new(MemoryWord,long,boolean,Doorbell)", "target", () -> new Memop.Write64(null, 1, false, null)));
        c.add(nul("Write64.new(MemoryWord,long,boolean)", "target", () -> new Memop.Write64(null, 1, false)));
        c.add(nul("Wait32.new(MemoryWord,int,WaitCondition,boolean,WaitProgress,WaitTally)", "condition",
                () -> new Memop.Wait32(w32, 1, null, false, null, null)));
        c.add(nul("Wait32.new(MemoryWord,int,WaitCondition,boolean,WaitProgress)", "target",
                () -> new Memop.Wait32(null, 1, WaitCondition.EQ, false, null)));
        c.add(nul("Wait32.new(MemoryWord,int,WaitCondition,boolean)", "condition", () -> new Memop.Wait32(w32, 1, null, false)));
        c.add(nul("Wait32.new(MemoryWord,int,WaitCondition)", "condition", () -> new Memop.Wait32(w32, 1, null)));
        c.add(nul("Wait64.new(MemoryWord,long,WaitCondition,boolean,WaitProgress)", "target",
                () -> new Memop.Wait64(null, 1, WaitCondition.EQ, false, null)));
        c.add(nul("Wait64.new(MemoryWord,long,WaitCondition,boolean)", "condition", () -> new Memop.Wait64(w64, 1, null, false)));
        c.add(nul("Wait64.new(MemoryWord,long,WaitCondition)", "condition", () -> new Memop.Wait64(w64, 1, null)));
        c.add(nul("WriteMemory.new(MemorySegment,long,byte[],boolean)", "target",
                () -> new Memop.WriteMemory(null, 0, new byte[4], false)));
        c.add(nul("WriteMemory.new(MemorySegment,long,byte[],boolean)", "data", () -> new Memop.WriteMemory(words, 0, null, false)));
        c.add(nul("Barrier.new(BarrierScope)", "scope", () -> new Memop.Barrier(null)));
        c.add(nul("MemopBatch.of(Memop[])", "ops", () -> MemopBatch.of((Memop[]) null)));
        c.add(bad("MemopBatch.of(Memop[])", "a null element", () -> MemopBatch.of(op, op, null), NullPointerException.class,
                "ops[2] must not be null"));
        c.add(nul("MemopBatch.of(Memop,Memop)", "first", () -> MemopBatch.of(null, op)));
        c.add(nul("MemopBatch.of(Memop,Memop)", "second", () -> MemopBatch.of(op, (Memop) null)));
        c.add(nul("MemopBatch.of(List)", "ops", () -> MemopBatch.of((List<Memop>) null)));
        c.add(bad("MemopBatch.builder(int)", "-1", () -> MemopBatch.builder(-1), IllegalArgumentException.class,
                "capacity must be >= 0, got -1"));
        c.add(nul("Builder.add(Memop)", "op", () -> MemopBatch.builder(2).add(null)));
        c.add(nul("Builder.addAll(MemopBatch)", "batch", () -> MemopBatch.builder(2).addAll(null)));
        c.add(nul("MemoryWord.word32(MemorySegment,long,String)", "segment", () -> MemoryWord.word32(null, 0, "w")));
        c.add(nul("MemoryWord.word32(MemorySegment,long,String)", "name", () -> MemoryWord.word32(words, 0, null)));
        c.add(bad("MemoryWord.word32(MemorySegment,long,String)", "offset -4", () -> MemoryWord.word32(words, -4, "w"),
                IndexOutOfBoundsException.class, "at offset -4 (4 bytes) is outside its segment of 64 bytes"));
        c.add(bad("MemoryWord.word32(MemorySegment,long,String)", "offset Long.MAX_VALUE",
                () -> MemoryWord.word32(words, Long.MAX_VALUE, "w"), IndexOutOfBoundsException.class, "is outside its segment"));
        c.add(bad("MemoryWord.word32(MemorySegment,long,String)", "a misaligned offset", () -> MemoryWord.word32(words, 2, "w"),
                IllegalArgumentException.class, "is not aligned to 4 bytes"));
        c.add(bad("MemoryWord.word64(MemorySegment,long,String)", "a heap segment",
                () -> MemoryWord.word64(MemorySegment.ofArray(new long[2]), 0, "w"), IllegalArgumentException.class,
                "must be in native memory"));
        c.add(nul("MemoryWord.word64(MemorySegment,long,String)", "segment", () -> MemoryWord.word64(null, 0, "w")));
        c.add(nul("HostMemops.execute(MemopBatch,WaitPolicy)", "batch", () -> HostMemops.execute((MemopBatch) null, policy)));
        c.add(nul("HostMemops.execute(MemopBatch,WaitPolicy)", "policy", () -> HostMemops.execute(MemopBatch.of(op), null)));
        c.add(nul("HostMemops.execute(MemopBatch,WaitPolicy,BackoffIdler,BooleanSupplier)", "idler",
                () -> HostMemops.execute(MemopBatch.of(op), policy, null, () -> false)));
        c.add(nul("HostMemops.execute(Memop,WaitPolicy,BackoffIdler,BooleanSupplier)", "op",
                () -> HostMemops.execute((Memop) null, policy, idler, () -> false)));
        c.add(nul("HostMemops.execute(Memop,WaitPolicy,BackoffIdler,BooleanSupplier)", "aborted",
                () -> HostMemops.execute(op, policy, idler, null)));
        c.add(nul("HostMemops.await32(MemoryWord,int,WaitCondition,WaitPolicy,BackoffIdler,BooleanSupplier)", "word",
                () -> HostMemops.await32(null, 0, WaitCondition.EQ, policy, idler, () -> false)));
        c.add(nul("HostMemops.await32(MemoryWord,int,WaitCondition,WaitPolicy,BackoffIdler,BooleanSupplier,WaitProgress)",
                "cond", () -> HostMemops.await32(w32, 0, null, policy, idler, () -> false, null)));
        c.add(bad("HostMemops.await32(MemoryWord,int,WaitCondition,WaitPolicy,BackoffIdler,BooleanSupplier)", "a 64-bit word",
                () -> HostMemops.await32(w64, 0, WaitCondition.EQ, policy, idler, () -> false), IllegalArgumentException.class,
                "a 32-bit wait needs a 32-bit word"));
        c.add(nul("HostMemops.await64(MemoryWord,long,WaitCondition,WaitPolicy,BackoffIdler,BooleanSupplier)", "policy",
                () -> HostMemops.await64(w64, 0, WaitCondition.EQ, null, idler, () -> false)));
        c.add(nul("HostMemops.await64(MemoryWord,long,WaitCondition,WaitPolicy,BackoffIdler,BooleanSupplier,WaitProgress)",
                "word", () -> HostMemops.await64(null, 0, WaitCondition.EQ, policy, idler, () -> false, null)));
        c.add(nul("WaitPolicy.new(BackoffPolicy,long)", "backoff", () -> new WaitPolicy(null, 1)));
        c.add(bad("WaitPolicy.new(BackoffPolicy,long)", "0 ns", () -> new WaitPolicy(BackoffPolicy.LOW_LATENCY, 0),
                IllegalArgumentException.class, "wait timeout must be positive, got 0 ns"));
        c.add(nul("WaitPolicy.lowLatency(Duration)", "timeout", () -> WaitPolicy.lowLatency(null)));
        c.add(bad("WaitPolicy.lowLatency(Duration)", "zero", () -> WaitPolicy.lowLatency(Duration.ZERO),
                IllegalArgumentException.class, "timeout must be positive, got PT0S"));
        c.add(bad("WaitPolicy.lowLatency(Duration)", "Long.MIN_VALUE s", () -> WaitPolicy.lowLatency(Duration.ofSeconds(Long.MIN_VALUE)),
                IllegalArgumentException.class, "timeout must be positive"));
        c.add(bad("WaitPolicy.lowLatency(Duration)", "Long.MAX_VALUE s", () -> WaitPolicy.lowLatency(huge),
                IllegalArgumentException.class, "timeout must be at most"));
        c.add(nul("WaitPolicy.withTimeout(Duration)", "timeout", () -> policy.withTimeout(null)));
        c.add(bad("WaitPolicy.withTimeout(Duration)", "Long.MAX_VALUE s", () -> policy.withTimeout(huge),
                IllegalArgumentException.class, "timeout must be at most"));
        return c;
    }

    // ---- what must not change ----

    /** Everything a refused call could have touched. */
    record State(int aSendFree, int aRecvFree, int bSendFree, int bRecvFree, int q2aSendFree, SendRequest.State prepared,
                 QpState qa, QpState qb, QpState fresh, int aRegistrations, int bRegistrations, List<String> aFiles,
                 List<String> bFiles, List<String> processes, Throwable streamFailure, boolean streamClosed, int streamThreads) {
    }

    static State state() throws IOException {
        return new State(p.qa.sendQueueFree(), p.qa.recvQueueFree(), p.qb.sendQueueFree(), p.qb.recvQueueFree(),
                q2a.sendQueueFree(), prepared.state(), p.qa.state(), p.qb.state(), fresh.state(), p.swA().registrations(),
                p.swB().registrations(), files(p.swA().directory().processDirectory()), files(p.swB().directory().processDirectory()),
                files(p.swA().directory().jobDirectory()), stream.failure(), stream.isClosed(), streamThreads());
    }

    private static List<String> files(Path dir) throws IOException {
        try (Stream<Path> list = Files.list(dir)) {
            return list.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    private static int streamThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().equals("gdasync-stream-x")).count();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void refusesPreciselyAndChangesNothing(Case c) throws IOException {
        State before = state();
        Throwable e = assertThrows(c.type(), c.call(), c::toString);
        String message = String.valueOf(e.getMessage());
        if (c.type() == NullPointerException.class && c.argument().endsWith("= null")) {
            assertEquals(c.message(), message, c.toString());
        } else {
            assertTrue(message.contains(c.message()), c + ": '" + message + "' lacks '" + c.message() + "'");
        }
        assertEquals(before, state(), c + " changed state");
    }

    /**
     * The table covers every public method and constructor of these classes that takes a reference argument: a
     * method added later without a row fails here.
     */
    @Test
    void everyPublicMethodWithAReferenceParameterHasARow() {
        List<Class<?>> classes = List.of(ShmDirectory.class, HostRegion.class, SoftwareNic.class, QueuePair.class, SendWorkRequest.class, RecvWorkRequest.class,
                ScatterGatherList.class, Endpoint.class, Completion.class, NicProviders.class, SwNicProvider.class,
                SwNicConfig.class, Descriptor.Send.class, Descriptor.Wait.class, Descriptor.WaitValue32.class,
                Descriptor.WriteValue32.class, Descriptor.WriteMemory.class, Descriptors.class, HostStream.class,
                Event.class, Event.Completer.class, Memop.Write32.class, Memop.Write64.class, Memop.Wait32.class,
                Memop.Wait64.class, Memop.WriteMemory.class, Memop.Barrier.class, MemopBatch.class, MemopBatch.Builder.class,
                MemoryWord.class, HostMemops.class, WaitPolicy.class);
        Set<String> covered = cases().stream().map(Case::method).collect(Collectors.toSet());
        Set<String> missing = new TreeSet<>();
        for (Class<?> type : classes) {
            for (Method m : type.getMethods()) {
                if (m.getDeclaringClass().getPackageName().startsWith("dev.gdasync.") && !m.getName().equals("equals")
                        && takesReference(m)) {
                    require(type, m.getName(), m, covered, missing);
                }
            }
            for (Constructor<?> k : type.getConstructors()) {
                if (takesReference(k)) {
                    require(type, "new", k, covered, missing);
                }
            }
        }
        assertEquals(Set.of(), missing, "public methods with no row in the table");
    }

    private static boolean takesReference(java.lang.reflect.Executable e) {
        return Modifier.isPublic(e.getModifiers()) && Arrays.stream(e.getParameterTypes()).anyMatch(t -> !t.isPrimitive());
    }

    private static void require(Class<?> type, String name, java.lang.reflect.Executable e, Set<String> covered,
                                Set<String> missing) {
        String key = type.getSimpleName() + "." + name + "(" + Arrays.stream(e.getParameterTypes())
                .map(Class::getSimpleName).collect(Collectors.joining(",")) + ")";
        if (!covered.contains(key)) {
            missing.add(key);
        }
    }

    // ---- huge but legal arguments ----

    @Test
    void hugeTimeoutsOfEventsNeitherOverflowNorWait() {
        Event.Completer done = Event.pending("s");
        done.complete();
        assertTrue(done.event().synchronize(Duration.ofSeconds(Long.MAX_VALUE)));
        assertTrue(done.event().synchronize(Duration.ofSeconds(Long.MIN_VALUE)));
        Event pending = Event.pending("s").event();
        long start = System.nanoTime();
        assertFalse(pending.synchronize(Duration.ofSeconds(Long.MIN_VALUE)), "a negative timeout only looks");
        assertTrue(System.nanoTime() - start < Duration.ofSeconds(5).toNanos());
    }

    @Test
    void theStreamsOfTheTableStillWork() {
        assertTrue(closedStream.isClosed());
        assertFalse(stream.isClosed());
        w32.set32(0, true);
        stream.post(List.of(new Descriptor.WriteValue32(w32, 7, 0)));
        stream.synchronize();
        assertEquals(7, w32.getAcquire32());
    }
}
