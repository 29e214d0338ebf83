package dev.gdasync.libmp.mpj;

import dev.gdasync.gdsync.concurrent.BackoffIdler;
import dev.gdasync.gdsync.descriptor.Descriptor;
import dev.gdasync.gdsync.descriptor.DescriptorFlags;
import dev.gdasync.gdsync.memop.MemoryWord;
import dev.gdasync.gdsync.memop.WaitCondition;
import dev.gdasync.gdsync.memop.WaitProgress;
import dev.gdasync.gdsync.stream.Stream;
import dev.gdasync.libmp.Mp;
import dev.gdasync.libmp.MpRequest;
import xdev.ProcessID;
import xdev.XDevException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * The device's sends rung by streams and its requests waited for by streams ({@link MpjOnStream}), LibMP's
 * {@code mp_isend_on_stream} and {@code mp_wait_on_stream} on MPJ's messages.
 *
 * <p>A stream send: the CPU packs the message into a send slot of the destination's channel now and prepares its send
 * on the queue pair; the stream, when it gets there, waits for a free receive slot of the destination (the credit word
 * that rank writes into this rank's window), rings the send, then writes the channel's rung word. The message takes
 * its sequence number and its fragment at the call, so it keeps its place among this rank's messages to that rank:
 * earlier ones reach the queue pair first (the call waits for them), and the CPU's later sends to that rank wait in
 * the channel's backlog until the stream rang it (the queue pair rings in prepare order).
 *
 * <p>A stream wait: the stream waits on a completion word that the device raises once the request completed and
 * MPJ's handlers ran (a receive's data is then in the program's array). Between its looks the stream's thread moves
 * the device on, under the device's lock, so the CPU thread need not call MPJ meanwhile.
 *
 * <p>Threads: the calls come from the program's thread; the waits' progress runs on the streams' threads; both under
 * the device's lock, except the words' own stores and loads.
 */
final class StreamPath {
    private final GdasyncDevice device;
    private final StreamWords words;
    private final Mp mp;

    StreamPath(GdasyncDevice device, StreamWords words) {
        this.device = device;
        this.words = words;
        this.mp = device.mp();
    }

    /** @return the number of the last send to {@code peer} that a stream rang */
    int rungNumber(int peer) {
        return words.rung(peer).getAcquire32();
    }

    /**
     * Packs a message into a send slot and posts its stream send; waits first (moving the device on) while earlier
     * messages to the destination are not on the queue pair yet, no send slot is free, or stream sends to it are not
     * rung yet on another stream.
     *
     * @param message the message, packed into the slot under the lock
     * @return the send's request: complete once the stream rang it
     * @throws XDevException if the destination is this rank or a rank of another host, the message does not fit one
     *                       slot, the stream refuses the work, or the device failed
     */
    DeviceRequest send(ProcessID dst, int tag, int context, PrimitiveMessage message, Stream stream) {
        int peer = device.rankOf("isendOnStream", dst);
        String call = "isendOnStream to rank " + peer + " tag " + tag;
        if (peer == device.rank()) {
            throw new XDevException(call + ": that is this rank; a stream rings sends to other ranks only (send this "
                    + "rank's messages to itself with Isend)");
        }
        if (!device.window().mapsPeer(peer)) {
            throw new XDevException(call + ": rank " + peer + " is on another host, where stream sends are not "
                    + "supported yet (this rank's credits and rendezvous reads to it share the queue pair, and would "
                    + "wait behind the stream's send)");
        }
        long room = device.channel(peer).sendSlot(0).byteSize() - Frames.HEADER;
        if (message.packedBytes() > room) {
            throw new XDevException(call + ": the message packs into " + message.packedBytes() + " bytes, more than "
                    + "one slot holds (" + room + " bytes after the header; " + GdasyncDevice.SLOT_BYTES_PROPERTY
                    + "); a stream sends one-slot messages only: send larger ones with Isend");
        }
        BackoffIdler idler = null;
        while (true) {
            synchronized (device.lock()) {
                device.progressHealthy(call);
                PeerChannel c = device.channel(peer);
                if (c.readyForStreamSend(stream)) {
                    return prepare(c, call, tag, context, message, stream);
                }
            }
            if (idler == null) {
                idler = device.waitIdler();
            }
            idler.idle();
        }
    }

    /** Packs, prepares and posts a stream send; under the lock, with a slot free and nothing before it. */
    private DeviceRequest prepare(PeerChannel c, String call, int tag, int context, PrimitiveMessage message,
                                  Stream stream) {
        int slot = c.takeSendSlot();
        MemorySegment frame = c.sendSlot(slot);
        PrimitiveMessage.Packed packed;
        try {
            packed = message.packInto(frame.asSlice(Frames.HEADER), call);
        } catch (RuntimeException e) {
            c.returnSendSlot(slot);
            throw e;
        }
        long sequence = c.nextSequence();
        Frames.header(frame, Frames.DATA, context, tag, packed.length(), 0, packed.type(), packed.elements(), 0,
                sequence);
        DeviceRequest r = new DeviceRequest(device, DeviceRequest.Kind.SEND, c.peer, tag, context, null, null);
        int number = c.nextStreamNumber();
        // The fragment may go once the peer took the one sent `slots` fragments before it out of its slots.
        int credit = (int) (c.nextFragment() - c.slots() + 1);
        MpRequest send;
        try {
            stream.post(List.of(new Descriptor.WaitValue32(device.window().creditWord(c.peer), credit,
                    WaitCondition.GEQ, DescriptorFlags.WAIT_POST_FLUSH, creditWait(call, c.peer))));
            send = c.putFragmentOnStream(slot, Frames.HEADER + packed.length(), stream);
        } catch (PeerChannel.PartlyOnStream e) {
            c.unuseSequence(sequence);
            String why = call + ": stream '" + stream.name() + "' took the message's put and refused the put of its "
                    + "stamp (" + e.getMessage() + "); no later message can go to rank " + c.peer;
            device.failUnderLock(why);
            throw new XDevException(why);
        } catch (RuntimeException e) {
            // Nothing will ring: the slot and the sequence number are free again (under the lock, none was taken since).
            c.unuseSequence(sequence);
            c.returnSendSlot(slot);
            throw new XDevException(call + ": stream '" + stream.name() + "' refused it: " + e.getMessage());
        }
        c.streamNumberUsed();
        c.streamSendPosted(slot, send, new PeerChannel.StreamSend(stream, number, r));
        device.track(r);
        try {
            mp.write32OnStream(words.rung(c.peer), number, stream);
        } catch (RuntimeException e) {
            // The stream failed or closed since the send's post: it will never say it rang, and the device fails at
            // its next progress (PeerChannel.reapRung), since this rank's later messages to that rank could never leave.
            throw new XDevException(call + ": stream '" + stream.name() + "' refused the word it writes once it rang "
                    + "the send: " + e.getMessage());
        }
        return r;
    }

    /** What a stream's wait for a peer's credit runs between looks: it ends the wait if the job or the device failed. */
    private WaitProgress creditWait(String call, int peer) {
        WaitProgress nic = mp.nic().waitProgress();
        int rank = device.rank();
        return () -> {
            String jf = mp.failure();
            if (jf != null) {
                throw new XDevException("MPJ over gdasync, rank " + rank + ": " + call + " stopped waiting for a free "
                        + "receive slot of rank " + peer + ": the job failed: " + jf);
            }
            String df = device.failure();
            if (df != null) {
                throw new XDevException(call + " stopped waiting for a free receive slot of rank " + peer + ": " + df);
            }
            return nic == null ? 0 : nic.progress();
        };
    }

    /**
     * Makes a stream wait until a request of the device completes (and MPJ's handlers ran). The stream's wait ends
     * with the request's error if the request fails, or the device or the job fails.
     *
     * @throws XDevException if every completion word is held, or the stream refuses the work
     */
    void await(DeviceRequest r, Stream stream) {
        boolean done;
        synchronized (device.lock()) {
            MemoryWord word = words.arm();
            if (word == null) {
                throw new XDevException("waitOnStream(" + r + "): all " + StreamWords.COMPLETIONS + " completion words "
                        + "are held by streams that have not passed their waits yet");
            }
            try {
                stream.post(List.of(new Descriptor.WaitValue32(word, StreamWords.DONE, WaitCondition.EQ,
                                DescriptorFlags.WAIT_POST_FLUSH, requestWait(r)),
                        new Descriptor.WriteValue32(word, StreamWords.FREE, DescriptorFlags.WRITE_PRE_BARRIER)));
            } catch (RuntimeException e) {
                StreamWords.disarm(word);
                throw new XDevException("waitOnStream(" + r + "): stream '" + stream.name() + "' refused it: "
                        + e.getMessage());
            }
            if (r.streamWords == null) {
                r.streamWords = new ArrayList<>(1);
            }
            r.streamWords.add(word);
            done = r.done && r.error == null;
        }
        if (done) {
            r.runHandlersOnce(r.status);
            raiseWords(r);
        }
    }

    /** What a stream's wait for a request runs between looks: the device's progress, then the request's outcome. */
    private WaitProgress requestWait(DeviceRequest r) {
        return () -> {
            synchronized (device.lock()) {
                if (!r.done) {
                    device.progressUnderLock();
                }
                if (!r.done) {
                    return 0;
                }
            }
            if (r.error != null) {
                throw new XDevException(r.error);
            }
            r.runHandlersOnce(r.status);
            raiseWords(r);
            return 1;
        };
    }

    /** A request completed and MPJ's handlers ran: the streams waiting on it move on. Any thread, outside the lock. */
    void raiseWords(DeviceRequest r) {
        if (r.streamWords == null) {
            // No stream waits on it now; one that comes later finds it done under the lock and raises its word itself.
            return;
        }
        List<MemoryWord> raise;
        synchronized (device.lock()) {
            raise = r.streamWords;
            r.streamWords = null;
        }
        if (raise != null) {
            for (MemoryWord w : raise) {
                StreamWords.raise(w);
            }
        }
    }
}
