package io.jccl.net.socket;

import io.jccl.spi.LogSubsystem;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.SendComm;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * The sending end of a connection. Sends wait for the receiver's clear-to-send frames: each CTS
 * announces one posted receive (its buffers' capacities and tags), and a send goes to the first
 * announced receive with an unfilled buffer of its tag. A small send with no CTS in hand goes
 * ahead as an EAGER frame (see {@link Wire}): it is complete once written to the socket, as NCCL's
 * Socket's sends are, and is placed when its CTS comes. A larger one, or a small one with
 * {@link Wire#EAGER_SLOTS} EAGERs unplaced, makes {@code isend} return null (would block) and asks
 * the receiver for its held-back CTS frames (WANT). No send is complete while a byte of it (its
 * frame included) waits in the control stream's staging: a caller whose sends are all done calls
 * this comm no more, and nothing else would write them.
 */
final class SocketSendComm extends SocketComm implements SendComm {
    /** Sends in flight: the spec's requests times the buffers a grouped receive may have. */
    static final int MAX_SENDS = NetPlugin.MAX_REQUESTS * SocketDevices.MAX_RECVS;
    private static final int CTS_RING = NetPlugin.MAX_REQUESTS;

    // Announced receives, in order: [ctsHead, ctsTail) are not yet fully matched.
    private final int[] ctsN = new int[CTS_RING];
    private final long[][] ctsCapacity = new long[CTS_RING][SocketDevices.MAX_RECVS];
    private final int[][] ctsTag = new int[CTS_RING][SocketDevices.MAX_RECVS];
    private final int[] ctsFilled = new int[CTS_RING];
    private long ctsHead;
    private long ctsTail;

    // EAGER sends whose receive is not yet known, oldest first: [eagerHead, eagerTail).
    private final int[] eagerSize = new int[Wire.EAGER_SLOTS];
    private final int[] eagerTag = new int[Wire.EAGER_SLOTS];
    /** A WANT went out and no CTS has come since: one is enough. */
    private boolean wantSent;
    /**
     * The last send was small, so the receiver holds its CTS frames back (its {@code streaming}
     * is false): they come in batches, and a small send goes EAGER without looking for them first.
     */
    private boolean receiverHoldsBack;
    /** The WANT byte for the liveness socket, where the peer's liveness thread sees it at once. */
    private final ByteBuffer wantByte = ByteBuffer.allocateDirect(1).put(0, LivenessWatch.WANT);
    private long eagerHead;
    private long eagerTail;
    private final int eagerLimit;
    /**
     * Tag and capacity of the latest announced receive if it had one buffer (else capacity -1):
     * what a send larger than an EAGER may go ahead of its CTS for ({@link #goesAhead}).
     */
    private int aheadTag;
    private long aheadCapacity = -1;
    /**
     * {@link #eagerHead} as the stall watchdog last saw it, and when it saw it move: an EAGER placed
     * then, and the receiver reading its bytes since (see {@link #stallClockFloor}).
     */
    private long placedSeen;
    private long placedSeenNanos = Long.MIN_VALUE;

    // Counters for the close line (caller thread only): sends, how they went, and how often isend
    // could not start one because no CTS was in hand.
    private long sendCount;
    private long inlineCount;
    private long eagerCount;
    private long aheadCount;
    private long noCtsCount;
    /** Since when isend has returned null without a break (0: it last returned a request). */
    private long refusedSinceNanos;
    /** A long run of refused sends was reported: once per comm. */
    private boolean refusalReported;
    private long wantCount;

    private final SendRequest[] requests = new SendRequest[MAX_SENDS];
    private long requestHead;
    private long requestTail;

    // Sends whose DATA frame went out but whose payload waits for its copy from the GPU, or behind
    // one that does (chunks go to the streams in send order): [deferHead, deferTail).
    private final SendRequest[] deferred = new SendRequest[MAX_SENDS];
    private long deferHead;
    private long deferTail;

    SocketSendComm(SocketNetPlugin plugin, SocketConfig.Settings settings, SocketChannel control, SocketChannel[] data,
                   SocketChannel liveness, int threads, String peer) throws NetException {
        super(plugin, settings, control, data, liveness, threads, true, peer);
        for (int i = 0; i < MAX_SENDS; i++) {
            requests[i] = new SendRequest(this, i);
        }
        eagerLimit = Math.min(inlineBytes, Wire.EAGER_SLOT_BYTES);
    }

    @Override
    boolean sending() {
        return true;
    }

    @Override
    String counters() {
        return sendCount + " sends: " + inlineCount + " inline, " + eagerCount + " eager, " + aheadCount
                + " ahead of their CTS; isend found no CTS "
                + noCtsCount + " times, asked for CTS " + wantCount + " times; " + quietPolls
                + " polls left to the I/O threads; " + streamTiming();
    }

    @Override
    int requestSlots() {
        return MAX_SENDS;
    }

    @Override
    String state(SocketRequest pending) {
        SendRequest r = (SendRequest) pending;
        return "send of " + r.size + " bytes: " + r.pending() + " payload bytes to move"
                + (r.copying ? ", copy from the GPU queued" : "") + ", its frame " + (out.hasWritten(r.controlMark)
                ? "written" : "not yet written") + "; sends [" + requestHead + ", " + requestTail + "), CTS in hand "
                + (ctsTail - ctsHead) + ", EAGERs unplaced " + (eagerTail - eagerHead) + ", held back for the GPU or "
                + "the streams " + (deferTail - deferHead) + "; " + counters();
    }

    SendRequest isend(MemorySegment data, int tag, MemoryHandle mhandle) throws NetException {
        SendRequest r = tryIsend(data, tag, mhandle);
        if (r != null) {
            refusedSinceNanos = 0;
            if (trace != null) {
                trace.posted();
            }
        } else if (!refusalReported) {
            refused(data.byteSize());
        }
        return r;
    }

    /**
     * isend returned null (no receive to send into yet, or no room). Once it has done so for longer
     * than the failure bound, the peer alive, the comm logs its state once at INFO, as for a
     * pending request ({@link #stillPending}).
     */
    private void refused(long size) {
        long now = livenessClock();
        if (refusedSinceNanos == 0) {
            refusedSinceNanos = now;
        } else if (now - refusedSinceNanos > timeoutNanos) {
            refusalReported = true;
            plugin.logger().info(LogSubsystem.NET, "NET/JcclSocket: isend of %d bytes to %s has found no receive to "
                    + "send into for %d ms, the peer alive (reported once per connection): sends [%d, %d), CTS in hand "
                    + "%d, EAGERs unplaced %d, held back for the GPU or the streams %d; %s", size, peer,
                    TimeUnit.NANOSECONDS.toMillis(now - refusedSinceNanos), requestHead, requestTail, ctsTail - ctsHead,
                    eagerTail - eagerHead, deferTail - deferHead, counters());
        }
    }

    private SendRequest tryIsend(MemorySegment data, int tag, MemoryHandle mhandle) throws NetException {
        MemoryRegion region = plugin.regionOf(this, mhandle);
        long offset = region.offsetOf(data);
        long size = data.byteSize();
        if (deferHead != deferTail) {
            stripeDeferred();
        }
        if (size > SocketDevices.MAX_MESSAGE_BYTES) {
            throw NetException.invalidArgument("JcclSocket sends at most " + SocketDevices.MAX_MESSAGE_BYTES
                    + " bytes in one message (maxP2pBytes); got " + size);
        }
        if (ctsHead == ctsTail || eagerHead != eagerTail) {
            if (receiverHoldsBack && size <= eagerLimit && eagerTail - eagerHead < Wire.EAGER_SLOTS / 2
                    && !out.busy()) {
                // The receiver writes its CTS frames in batches now, and EAGER credit is to spare:
                // send without a read syscall for frames that are rarely there; they are read once
                // half the credit is out, or by test() of a send not yet written.
                checkUsable();
                SendRequest r = sendEager(region, offset, tag, size);
                if (r != null) {
                    return r;
                }
            }
            if (size > eagerLimit && hasIoThreads() && eagerTail - eagerHead < Wire.EAGER_SLOTS / 2
                    && goesAhead(region, tag, size)) {
                // It would go ahead of its CTS anyway: no read syscall for a CTS first (NCCL's proxy
                // posts its receives after the peer's data is ready, so one is rarely there). The
                // frames are read once half the EAGER credit is out, or by test() and later sends.
                checkUsable();
                SendRequest r = sendAhead(region, offset, tag, size);
                if (r != null) {
                    return r;
                }
            }
            progress();
            if (ctsHead == ctsTail || eagerHead != eagerTail) {
                // No receive in hand, or earlier EAGERs not yet placed (this send goes after them).
                SendRequest r = size <= eagerLimit ? sendEager(region, offset, tag, size)
                        : goesAhead(region, tag, size) ? sendAhead(region, offset, tag, size) : null;
                if (r == null) {
                    noCtsCount++;
                    askForCts();
                }
                return r;
            }
        } else {
            checkUsable();
        }
        int c = (int) (ctsHead % CTS_RING);
        int buffer = freeBuffer(c, tag);
        if (requestTail - requestHead == MAX_SENDS) {
            return null;
        }
        long capacity = ctsCapacity[c][buffer];
        boolean oversize = size > capacity;
        boolean inline = !oversize && size <= inlineBytes;
        boolean viaStreams = !oversize && !inline && streams.length > 0;
        int stagedBytes = Wire.DATA_HEADER + (inline ? (int) size : 0);
        boolean payloadOnControl = !oversize && !inline && !viaStreams;
        if (!out.hasRoom(stagedBytes, payloadOnControl ? 1 : 0) || (viaStreams && !streamsHaveRoom(size))) {
            progress();
            return null;
        }

        long seq = ctsHead;
        ctsFilled[c] |= 1 << buffer;
        if (Integer.bitCount(ctsFilled[c]) == ctsN[c]) {
            ctsHead++;
        }
        SendRequest r = newRequest(size);
        inlineCount += inline ? 1 : 0;
        receiverHoldsBack = size <= Wire.EAGER_SLOT_BYTES;
        ByteBuffer frame = out.stage(stagedBytes);
        int flags = oversize ? Wire.FLAG_OVERSIZE : inline ? Wire.FLAG_INLINE : 0;
        if (!oversize && size > Wire.EAGER_SLOT_BYTES && goesAhead(region, tag, size)) {
            // Had its CTS not been here, it would have gone ahead: the receiver need not hurry the next.
            flags |= Wire.FLAG_AHEAD_OK;
        }
        frame.put(Wire.DATA).put((byte) buffer).put((byte) flags).put((byte) 0).putInt((int) seq).putLong(size);
        if (oversize) {
            r.error = NetException.invalidUsage("send of " + size + " bytes is larger than the " + capacity
                    + "-byte buffer (tag " + tag + ") that " + peer + " posted; nothing was sent");
        } else {
            payload(r, frame, region, offset, inline, viaStreams);
        }
        flushOrFail(r);
        return r;
    }

    /**
     * @return the first unfilled buffer of tag {@code tag} in announced receive {@code c}
     * @throws NetException if it has none: sends and receives are out of step
     */
    private int freeBuffer(int c, int tag) throws NetException {
        for (int i = 0; i < ctsN[c]; i++) {
            if ((ctsFilled[c] & (1 << i)) == 0 && ctsTag[c][i] == tag) {
                return i;
            }
        }
        throw NetException.invalidUsage("send with tag " + tag + " matches no free buffer of the receive posted by "
                + peer + " (tags " + tags(c) + "): sends and receives match in posting order");
    }

    @Override
    long stallClockFloor(long now) {
        // Sends ahead of their receives: the receiver reads nothing of them until it posts those.
        if (eagerHead != eagerTail) {
            return now;
        }
        if (eagerHead != placedSeen) {
            placedSeen = eagerHead;
            placedSeenNanos = now;
        }
        return placedSeenNanos;
    }

    /**
     * @return whether a send too large for an EAGER slot may still go before its CTS: the receiver
     *         posted one-buffer receives of this tag and at least this size so far (as NCCL's
     *         proxy does, one buffer size per connection), so its receive will very likely take it
     */
    private boolean goesAhead(MemoryRegion region, int tag, long size) {
        return !region.onDevice() && deferHead == deferTail && aheadTag == tag && size <= aheadCapacity;
    }

    /**
     * A send larger than an EAGER slot, before its CTS (an EAGER frame with {@link Wire#FLAG_AHEAD}):
     * its payload goes as a DATA frame's would (inline, over the data streams or after the frame),
     * and the receiver reads it once its receive is posted, leaving it in the sockets until then, as
     * NCCL's Socket does with every message. Without it a send waits a round trip for the CTS of
     * every receive that NCCL's proxy posts later than the peer's data is ready (every step of a
     * collective whose ranks run level: 1.6 to 2 failed isend calls per message under NCCL).
     */
    private SendRequest sendAhead(MemoryRegion region, long offset, int tag, long size) throws NetException {
        boolean inline = size <= inlineBytes;
        boolean viaStreams = !inline && streams.length > 0;
        int stagedBytes = Wire.DATA_HEADER + (inline ? (int) size : 0);
        if (eagerTail - eagerHead == Wire.EAGER_SLOTS || requestTail - requestHead == MAX_SENDS
                || !out.hasRoom(stagedBytes, inline || viaStreams ? 0 : 1) || (viaStreams && !streamsHaveRoom(size))) {
            return null;
        }
        SendRequest r = newRequest(size);
        aheadCount++;
        inlineCount += inline ? 1 : 0;
        int e = (int) (eagerTail++ % Wire.EAGER_SLOTS);
        eagerSize[e] = (int) size;
        eagerTag[e] = tag;
        ByteBuffer frame = out.stage(stagedBytes);
        byte flags = (byte) (Wire.FLAG_AHEAD | (inline ? Wire.FLAG_INLINE : 0));
        frame.put(Wire.EAGER).put((byte) 0).put(flags).put((byte) 0).putInt(tag).putLong(size);
        payload(r, frame, region, offset, inline, viaStreams);
        flushOrFail(r);
        return r;
    }

    /** @return the next request of the ring, handed out for a send of {@code size} bytes */
    private SendRequest newRequest(long size) {
        SendRequest r = requests[(int) (requestTail++ % MAX_SENDS)];
        r.active = true;
        r.size = (int) size;
        sendCount++;
        return r;
    }

    /**
     * Queues a send's payload after its frame (staged, not yet flushed): copied into the frame
     * (inline), dealt over the data streams, or after the frame on the control stream. Device
     * memory reaches the host mirror first.
     */
    private void payload(SendRequest r, ByteBuffer frame, MemoryRegion region, long offset, boolean inline,
                         boolean viaStreams) throws NetException {
        long size = r.size;
        if (inline) {
            if (region.onDevice()) {
                copyFromDeviceNow(region, offset, size);
            }
            MemorySegment.copy(region.memory, ValueLayout.JAVA_BYTE, offset, out.stagingMemory(), ValueLayout.JAVA_BYTE,
                    frame.position(), size);
        } else if (viaStreams) {
            r.addPending(size);
            if (region.onDevice() || deferHead != deferTail) {
                defer(r, region, offset);
            } else {
                stripe(region, offset, size, r);
            }
        } else {
            r.addPending(size);
            if (region.onDevice()) {
                copyFromDeviceNow(region, offset, size);
            }
            out.payload(region, offset, size, r);
        }
    }

    /**
     * Writes what the control stream has staged for send {@code r}, which completes only once those
     * bytes are written; a broken connection fails the comm.
     */
    private void flushOrFail(SendRequest r) {
        r.controlMark = out.queuedMark();
        flushOrFail();
    }

    /** Writes what the control stream has staged; a broken connection fails the comm. */
    private void flushOrFail() {
        try {
            out.flush();
        } catch (IOException e) {
            fail(NetException.remoteError("connection to " + peer + " lost: " + e.getMessage(), e));
        }
    }

    /** A small send ahead of its CTS: copied into an EAGER frame now, placed when the CTS comes. */
    private SendRequest sendEager(MemoryRegion region, long offset, int tag, long size) throws NetException {
        int stagedBytes = Wire.DATA_HEADER + (int) size;
        if (eagerTail - eagerHead == Wire.EAGER_SLOTS || requestTail - requestHead == MAX_SENDS
                || !out.hasRoom(stagedBytes, 0)) {
            return null;
        }
        if (region.onDevice()) {
            copyFromDeviceNow(region, offset, size);
        }
        SendRequest r = newRequest(size);
        eagerCount++;
        receiverHoldsBack = true;
        int e = (int) (eagerTail++ % Wire.EAGER_SLOTS);
        eagerSize[e] = (int) size;
        eagerTag[e] = tag;
        ByteBuffer frame = out.stage(stagedBytes);
        frame.put(Wire.EAGER).put((byte) 0).put((byte) 0).put((byte) 0).putInt(tag).putLong(size);
        MemorySegment.copy(region.memory, ValueLayout.JAVA_BYTE, offset, out.stagingMemory(), ValueLayout.JAVA_BYTE,
                frame.position(), size);
        flushOrFail(r);
        return r;
    }

    /** A small device send: its bytes in the host mirror before the call returns. */
    private void copyFromDeviceNow(MemoryRegion region, long offset, long size) throws NetException {
        try {
            staging.copyToHostNow(region, offset, size);
        } catch (NetException e) {
            fail(e);
            throw e;
        }
    }

    /**
     * Holds a send's payload back from the streams: device memory until its copy to the host mirror
     * is done, host memory while an earlier send is held (the streams take chunks in send order).
     */
    private void defer(SendRequest r, MemoryRegion region, long offset) throws NetException {
        r.stageRegion = region;
        r.stageOffset = offset;
        if (region.onDevice()) {
            try {
                staging.toHost(region, offset, r.size);
                staging.mark(r.slot);
            } catch (NetException e) {
                fail(e);
                throw e;
            }
            r.copying = true;
        }
        deferred[(int) (deferTail++ % MAX_SENDS)] = r;
        stripeDeferred();
    }

    /** Stripes the held-back sends whose bytes are in host memory now, in order, while the streams have room. */
    private void stripeDeferred() throws NetException {
        while (deferHead != deferTail) {
            SendRequest r = deferred[(int) (deferHead % MAX_SENDS)];
            try {
                if (r.copying && !staging.isDone(r.slot)) {
                    return;
                }
            } catch (NetException e) {
                fail(e);
                throw e;
            }
            if (!streamsHaveRoom(r.size)) {
                return;
            }
            r.copying = false;
            stripe(r.stageRegion, r.stageOffset, r.size, r);
            r.stageRegion = null;
            deferred[(int) (deferHead++ % MAX_SENDS)] = null;
        }
    }

    /**
     * Asks the receiver to write the CTS frames it holds back, once until one comes: this send
     * waits for them (it is large, or the EAGER credit is spent).
     */
    private void askForCts() throws NetException {
        if (wantSent || !out.hasRoom(Wire.DATA_HEADER, 0)) {
            return;
        }
        wantSent = true;
        wantCount++;
        out.stage(Wire.DATA_HEADER).put(Wire.WANT).put((byte) 0).putShort((short) 0).putInt(0).putLong(0);
        flushOrFail();
        try {
            // Also on the liveness socket: the receiver's liveness thread answers even if its caller
            // does not call the receiving comm. A full socket (a frozen peer) takes nothing: no matter.
            liveness.write(wantByte.clear());
        } catch (IOException e) {
            // The liveness thread reports a broken liveness socket.
        }
    }

    /**
     * Places unplaced EAGERs into the receives now announced, by the rule the receiver follows too.
     * An EAGER too large for its receive has already completed here; the receiver failed its receive,
     * and this comm fails so that the sender learns it too.
     */
    private void placeEagers() throws NetException {
        while (eagerHead != eagerTail && ctsHead != ctsTail) {
            int e = (int) (eagerHead % Wire.EAGER_SLOTS);
            int c = (int) (ctsHead % CTS_RING);
            int buffer = freeBuffer(c, eagerTag[e]);
            long capacity = ctsCapacity[c][buffer];
            if (eagerSize[e] > capacity) {
                throw NetException.invalidUsage("a send of " + eagerSize[e] + " bytes was larger than the " + capacity
                        + "-byte buffer (tag " + eagerTag[e] + ") that " + peer + " posted; it was not received");
            }
            ctsFilled[c] |= 1 << buffer;
            if (Integer.bitCount(ctsFilled[c]) == ctsN[c]) {
                ctsHead++;
            }
            eagerHead++;
        }
    }

    boolean test(SendRequest r, int[] sizes) throws NetException {
        if (!r.active) {
            throw NetException.internalError("test of a JcclSocket send that is not in flight (already reported done?)");
        }
        if (r.pending() == 0 && deferHead == deferTail && out.hasWritten(r.controlMark)) {
            // All of it is with the kernel (an inline or EAGER send, or the last chunk written): done
            // without a read syscall, as NCCL's Socket completes a send once it is written.
            checkUsable();
            return complete(r, sizes);
        }
        try {
            if (deferHead != deferTail) {
                stripeDeferred();
            }
            if (r.pending() != 0 && deferHead == deferTail && !out.busy() && hasIoThreads()) {
                // Its bytes are with the I/O threads: the CTS frames a read would find are for
                // later sends, and isend reads them when it needs one.
                pollStreams();
            } else {
                progress();
            }
        } catch (NetException e) {
            release(r);
            throw e;
        }
        if (r.pending() != 0 || !out.hasWritten(r.controlMark)) {
            // Its frame (or inline payload) still waits in the staging: only a later call writes it,
            // and a caller whose sends are all done makes none (the receiver would wait for ever).
            stillPending(r);
            return false;
        }
        return complete(r, sizes);
    }

    private boolean complete(SendRequest r, int[] sizes) throws NetException {
        if (trace != null) {
            trace.done();
        }
        NetException error = r.error;
        int size = r.size;
        release(r);
        if (error != null) {
            throw error;
        }
        if (sizes != null && sizes.length > 0) {
            sizes[0] = size;
        }
        return true;
    }

    private void release(SendRequest r) {
        r.active = false;
        r.reset();
        while (requestHead != requestTail && !requests[(int) (requestHead % MAX_SENDS)].active) {
            requestHead++;
        }
    }

    @Override
    void readInbound() throws IOException, NetException {
        if (ctsTail - ctsHead > 1 && eagerHead == eagerTail) {
            // Receives to send into are in hand: skip the read syscall. A dead peer still shows,
            // as a failed write of the pending sends or through the stall watchdog.
            return;
        }
        while (buffered(Wire.CTS_HEADER)) {
            if (in.byteAt(0) != Wire.CTS) {
                throw protocolError("expected a CTS frame, got type " + in.byteAt(0));
            }
            int n = Byte.toUnsignedInt(in.byteAt(1));
            if (n < 1 || n > SocketDevices.MAX_RECVS) {
                throw protocolError("CTS for " + n + " buffers");
            }
            if (!buffered(Wire.ctsBytes(n))) {
                return;
            }
            if (in.intAt(4) != (int) ctsTail || ctsTail - ctsHead == CTS_RING) {
                throw protocolError("CTS " + in.intAt(4) + " out of sequence (expected " + ctsTail + ")");
            }
            int c = (int) (ctsTail % CTS_RING);
            ctsN[c] = n;
            ctsFilled[c] = 0;
            for (int i = 0; i < n; i++) {
                ctsCapacity[c][i] = in.longAt(Wire.CTS_HEADER + i * Wire.CTS_ENTRY);
                ctsTag[c][i] = in.intAt(Wire.CTS_HEADER + i * Wire.CTS_ENTRY + 8);
            }
            aheadTag = ctsTag[c][0];
            aheadCapacity = n == 1 ? ctsCapacity[c][0] : -1;
            in.consume(Wire.ctsBytes(n));
            ctsTail++;
            wantSent = false;
            placeEagers();
        }
    }

    /** @return whether {@code bytes} are buffered, after reading what the socket has */
    private boolean buffered(int bytes) throws IOException {
        while (in.available() < bytes) {
            if (in.drained() || in.fill() == 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    boolean inboundInFlight() {
        return false;
    }

    @Override
    long lastInboundNanos() {
        return 0;
    }

    private NetException protocolError(String what) {
        return NetException.internalError("JcclSocket protocol error on the connection to " + peer + ": " + what);
    }

    private String tags(int c) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < ctsN[c]; i++) {
            b.append(i == 0 ? "" : ",").append(ctsTag[c][i]).append((ctsFilled[c] & (1 << i)) != 0 ? "(filled)" : "");
        }
        return b.toString();
    }
}
