package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SpiArrays;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The receiving end of a connection. Every posted receive is announced to the sender with a CTS
 * frame; DATA frames then say which buffer each message lands in and how large it is. Payload
 * arrives inline, after its frame on the control stream, or in chunks over the data streams. A
 * small send may come as an EAGER frame before its CTS: it goes where the sender's rule puts it
 * (the oldest receive not yet full, its first unfilled buffer of that tag), or waits in one of
 * {@link Wire#EAGER_SLOTS} slots until that receive is posted.
 *
 * <p>While messages are small the CTS frames are held back and written {@link #CTS_BATCH} at a
 * time: a small send does not need its CTS (it goes EAGER), only the credit it returns, so one
 * write per message is enough, as with NCCL's Socket. So are those of large messages that the
 * sender could send ahead of their CTS (its DATA frames say so, {@link Wire#FLAG_AHEAD_OK}, or they
 * come ahead): a pipeline of equal receives, as NCCL's proxy posts, then costs one write per
 * message instead of two. They are written at once when the last message was large and its sender
 * needed the CTS, when a receive is unlike the one before (its sender may not go ahead for it),
 * when the sender asks (a WANT frame: it is out of credit or cannot go ahead), and when an EAGER
 * was too large (so that the sender learns it).
 */
final class SocketRecvComm extends SocketComm implements RecvComm {
    private static final int MAX_RECEIVES = NetPlugin.MAX_REQUESTS;
    /**
     * CTS frames held back while messages are small, at most: half the sender's EAGER credit (it
     * reads for them once half is out), and no more than the receives whose CTS content
     * {@link #ctsN} keeps by sequence number.
     */
    static final int CTS_BATCH = Math.min(Wire.EAGER_SLOTS / 2, MAX_RECEIVES);

    private final RecvRequest[] requests = new RecvRequest[MAX_RECEIVES];
    /** Receives [requestHead, requestTail) are handed out; requestTail is the next CTS sequence number. */
    private long requestHead;
    private long requestTail;

    /** The oldest posted receive not yet full: where the next EAGER goes. */
    private long placeHead;

    // CTS frames of receives [announcedTail, requestTail) are not yet written; their content is kept
    // here, by sequence number, because a receive an EAGER filled may complete before its CTS goes.
    private final int[] ctsN = new int[MAX_RECEIVES];
    private final long[][] ctsCapacity = new long[MAX_RECEIVES][SocketDevices.MAX_RECVS];
    private final int[][] ctsTag = new int[MAX_RECEIVES][SocketDevices.MAX_RECVS];
    private long announcedTail;
    /** The bytes of those frames: what their write will stage. */
    private int heldBackBytes;
    /** The sender asked for every CTS (WANT), or must learn of a refused EAGER: write them now. */
    private boolean ctsWanted;
    /**
     * The last message was larger than an EAGER can be and its sender could not have sent it ahead:
     * the sender waits for each CTS. True until a first small message or one that could go ahead
     * comes, so that a connection starts as one without the hold-back did.
     */
    private boolean streaming = true;
    /** Capacity of the last posted receive if it had one buffer, else -1; and its tag. */
    private long lastCapacity = -1;
    private int lastTag;
    // EAGERs that came before their receive was posted, oldest first: [eagerHead, eagerTail).
    private final MemorySegment eagerSlots =
            MemorySegment.ofBuffer(ByteBuffer.allocateDirect(Wire.EAGER_SLOTS * Wire.EAGER_SLOT_BYTES));
    private final int[] eagerTag = new int[Wire.EAGER_SLOTS];
    private final int[] eagerSize = new int[Wire.EAGER_SLOTS];
    private long eagerHead;
    private long eagerTail;

    // Counters for the close line: receives, and the writes that announced them.
    private long receiveCount;
    private long ctsWriteCount;
    private long wantedCount;

    // A payload arriving on the control stream, after its DATA frame.
    private RecvRequest payloadRequest;
    /**
     * While a later receive is posted, a poll that only waits for the I/O threads still reads the
     * control stream this often: the next message's frame, parsed early, lets its bytes flow over
     * the streams while this one's finish. NCCL tests its receives in order: reading only at the
     * next one's first test left the streams idle between messages.
     */
    private static final long NEXT_FRAME_LOOK_NANOS = 5_000;
    /** When the control stream was last read, while a receive may owe stream bytes. Caller thread. */
    private long lastReadNanos;
    /**
     * The latest receive whose payload went over the data streams, or -1: while it is not released
     * (and so no earlier one is) a read stamps {@link #lastReadNanos}. Small messages then read no
     * clock: under NCCL that stamp was 2% of the proxy thread's time at 8 bytes (H200).
     */
    private long lastStripedSeq = -1;
    /** Clock reads for {@link #lastReadNanos} (for tests). */
    private long readStamps;
    private MemoryRegion payloadRegion;
    private long payloadOffset;
    private long payloadRemaining;
    private long lastInboundNanos;
    /**
     * How much to read ahead when waiting for a frame: everything while frames are small, just a
     * header after a large payload on the control stream, so that the next large payload is read
     * without a copy.
     */
    private int readAhead = ControlIn.BUFFER_BYTES;

    SocketRecvComm(SocketNetPlugin plugin, SocketConfig.Settings settings, SocketChannel control, SocketChannel[] data,
                   SocketChannel liveness, int threads, String peer) throws NetException {
        super(plugin, settings, control, data, liveness, threads, false, peer);
        for (int i = 0; i < MAX_RECEIVES; i++) {
            requests[i] = new RecvRequest(this, i);
        }
    }

    @Override
    boolean sending() {
        return false;
    }

    @Override
    synchronized String counters() {
        return receiveCount + " receives announced in " + ctsWriteCount + " CTS writes, " + wantedCount
                + " of them asked for by the sender or a large message after small ones; " + quietPolls
                + " polls left to the I/O threads; " + streamTiming();
    }

    @Override
    int requestSlots() {
        return MAX_RECEIVES;
    }

    @Override
    synchronized String state(SocketRequest pending) {
        RecvRequest r = (RecvRequest) pending;
        return "receive #" + r.seq + " of " + r.n + " buffer(s): " + r.announced + " DATA/EAGER frame(s) in, "
                + r.pending() + " payload bytes to come" + (r.onDevice ? ", device memory, copy to the GPU "
                + (r.copying ? "queued" : "not queued") : "") + "; receives [" + requestHead + ", " + requestTail
                + "), next to fill " + placeHead + ", CTS written up to " + announcedTail + (ctsWanted ? " (one wanted)"
                : "") + ", EAGERs waiting " + (eagerTail - eagerHead) + ", payload on the control stream "
                + (payloadRequest == null ? "none" : "for #" + payloadRequest.seq + " (" + payloadRemaining + " bytes)")
                + ", bytes read not parsed " + in.available() + "; " + counters();
    }

    // irecv and test hold this comm's monitor (uncontended but for wantFromWatch): the liveness thread
    // may write held-back CTS frames for a sender that waits while this comm's caller is not calling.

    synchronized RecvRequest irecv(int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
            throws NetException {
        checkUsable();
        if (n < 1 || n > SocketDevices.MAX_RECVS) {
            throw NetException.internalError("irecv of " + n + " buffers; JcclSocket takes 1 to "
                    + SocketDevices.MAX_RECVS + " (maxRecvs)");
        }
        if (data.length < n || tags.length < n || mhandles.length < n) {
            throw NetException.invalidArgument("irecv of " + n + " buffers with arrays of " + data.length + ", "
                    + tags.length + " and " + mhandles.length + " entries");
        }
        RecvRequest r = requests[(int) (requestTail % MAX_RECEIVES)];
        if (requestTail - requestHead == MAX_RECEIVES) {
            return null;
        }
        boolean onDevice = false;
        for (int i = 0; i < n; i++) {
            MemoryRegion region = plugin.regionOf(this, mhandles[i]);
            r.offsets[i] = region.offsetOf(data[i]);
            r.regions[i] = region;
            onDevice |= region.onDevice();
        }
        if (!out.hasRoom(heldBackBytes + Wire.ctsBytes(n), 0)) {
            progress();
            return null;
        }
        r.active = true;
        r.onDevice = onDevice;
        r.seq = requestTail++;
        receiveCount++;
        r.n = n;
        int c = (int) (r.seq % MAX_RECEIVES);
        ctsN[c] = n;
        heldBackBytes += Wire.ctsBytes(n);
        for (int i = 0; i < n; i++) {
            SpiArrays.set(r.buffers, i, data[i]); // no C2 trap: see SpiArrays
            r.tags[i] = tags[i];
            ctsCapacity[c][i] = data[i].byteSize();
            ctsTag[c][i] = tags[i];
        }
        try {
            placeWaitingEagers();
            if (in.available() >= Wire.DATA_HEADER) {
                // A message sent ahead may wait in what was read already: take it now, without a syscall.
                readFrames();
            }
            // A receive unlike the last may not take the sender's next send ahead of its CTS.
            boolean likeTheLast = n == 1 && ctsCapacity[c][0] == lastCapacity && tags[0] == lastTag;
            lastCapacity = n == 1 ? ctsCapacity[c][0] : -1;
            lastTag = tags[0];
            if (ctsWanted || streaming || !likeTheLast || requestTail - announcedTail >= CTS_BATCH) {
                announce();
            }
        } catch (NetException e) {
            fail(e);
            throw e;
        } catch (IOException e) {
            fail(NetException.remoteError("connection from " + peer + " lost: " + e.getMessage(), e));
        }
        if (trace != null) {
            trace.posted();
        }
        return r;
    }

    /**
     * The sender waits for a CTS (it wrote a WANT byte on the liveness socket too): writes the CTS
     * frames held back now, or the next one at once. So a caller that posts a receive and then only
     * retries its send, never calling this comm, still gets its CTS. Liveness thread.
     */
    synchronized void wantFromWatch() {
        if (isClosed() || failure() != null) {
            return;
        }
        try {
            if (announcedTail < requestTail) {
                announce();
            } else {
                ctsWanted = true;
            }
        } catch (IOException e) {
            fail(NetException.remoteError("connection from " + peer + " lost: " + e.getMessage(), e));
        }
    }

    /** @return the writes that carried CTS frames so far (for tests) */
    synchronized long ctsWrites() {
        return ctsWriteCount;
    }

    private void stampRead() {
        lastReadNanos = System.nanoTime();
        readStamps++;
    }

    /** @return the clock reads that stamped a control-stream read (for tests) */
    synchronized long readStamps() {
        return readStamps;
    }

    /** @return receives whose CTS is held back (for tests) */
    int heldBackCts() {
        return (int) (requestTail - announcedTail);
    }

    /** Writes the CTS frames held back, in one write. Room for them was checked when each was posted. */
    private void announce() throws IOException {
        wantedCount += ctsWanted ? 1 : 0;
        ctsWanted = false;
        if (announcedTail == requestTail) {
            return;
        }
        ctsWriteCount++;
        ByteBuffer frame = out.stage(heldBackBytes);
        heldBackBytes = 0;
        for (; announcedTail < requestTail; announcedTail++) {
            int c = (int) (announcedTail % MAX_RECEIVES);
            frame.put(Wire.CTS).put((byte) ctsN[c]).putShort((short) 0).putInt((int) announcedTail);
            for (int i = 0; i < ctsN[c]; i++) {
                frame.putLong(ctsCapacity[c][i]).putInt(ctsTag[c][i]);
            }
        }
        out.flush();
    }

    synchronized boolean test(RecvRequest r, int[] sizes) throws NetException {
        if (!r.active) {
            throw NetException.internalError("test of a JcclSocket receive that is not in flight (already reported done?)");
        }
        try {
            if (settledWithoutReading(r)) {
                checkUsable();
            } else if (onlyStreamsOwe(r)) {
                pollStreams();
            } else {
                progress();
            }
        } catch (NetException e) {
            release(r);
            throw e;
        }
        if (r.announced < r.n || r.pending() != 0) {
            stillPending(r);
            return false;
        }
        if (r.onDevice && r.error == null && !copiedToDevice(r)) {
            stillPending(r);
            return false;
        }
        NetException error = r.error;
        if (error == null && sizes != null) {
            System.arraycopy(r.sizes, 0, sizes, 0, Math.min(r.n, sizes.length));
        }
        if (trace != null) {
            trace.done();
        }
        release(r);
        if (error != null) {
            throw error;
        }
        return true;
    }

    /**
     * @return whether every frame of {@code r} is parsed and what it still waits for is with the
     *         I/O threads, and the caller has nothing to write: a read of the control stream now
     *         would only find later messages' frames, which their own receives' polls read
     */
    private boolean onlyStreamsOwe(RecvRequest r) {
        return r.announced == r.n && r.pending() != 0 && payloadRequest != r && hasIoThreads() && nothingToWrite()
                && (placeHead == requestTail || System.nanoTime() - lastReadNanos < NEXT_FRAME_LOOK_NANOS);
    }

    /**
     * @return whether all of {@code r} has arrived and the caller has nothing to write: it completes
     *         without a read (the frames it would find are for later receives, whose polls read them)
     */
    private boolean settledWithoutReading(RecvRequest r) {
        return r.announced == r.n && r.pending() == 0 && nothingToWrite();
    }

    /** @return whether no frame waits to be written: none staged, no CTS owed to a sender that waits */
    private boolean nothingToWrite() {
        return !out.busy() && !(ctsWanted && announcedTail < requestTail);
    }

    /**
     * A receive into device memory has landed in the host mirrors: queues the copies to the GPU at
     * the first call, then says whether they are done.
     */
    private boolean copiedToDevice(RecvRequest r) throws NetException {
        try {
            if (!r.copying) {
                for (int i = 0; i < r.n; i++) {
                    if (r.regions[i].onDevice() && r.sizes[i] > 0) {
                        staging.toDevice(r.regions[i], r.offsets[i], r.sizes[i]);
                    }
                }
                staging.mark(r.slot);
                r.copying = true;
                return false;
            }
            return staging.isDone(r.slot);
        } catch (NetException e) {
            fail(e);
            release(r);
            throw e;
        }
    }

    private void release(RecvRequest r) {
        r.active = false;
        r.reset();
        while (requestHead != requestTail && !requests[(int) (requestHead % MAX_RECEIVES)].active) {
            requestHead++;
        }
    }

    @Override
    void readInbound() throws IOException, NetException {
        if (lastStripedSeq >= requestHead) {
            stampRead(); // only onlyStreamsOwe reads it, for a striped receive
        }
        readFrames();
        if (ctsWanted && announcedTail < requestTail) {
            announce();
        }
    }

    private void readFrames() throws IOException, NetException {
        while (true) {
            if (payloadRemaining > 0 && !movePayload()) {
                return;
            }
            if (!buffered(Wire.DATA_HEADER)) {
                return;
            }
            if (in.byteAt(0) == Wire.EAGER) {
                if (!readEager()) {
                    return;
                }
                streaming = false;
                continue;
            }
            if (in.byteAt(0) == Wire.WANT) {
                in.consume(Wire.DATA_HEADER);
                ctsWanted = true;
                continue;
            }
            if (in.byteAt(0) != Wire.DATA) {
                throw protocolError("expected a DATA frame, got type " + in.byteAt(0));
            }
            if (eagerHead != eagerTail) {
                throw protocolError("DATA while EAGERs wait for their receive");
            }
            int buffer = Byte.toUnsignedInt(in.byteAt(1));
            int flags = in.byteAt(2);
            int seq = in.intAt(4);
            long size = in.longAt(8);
            RecvRequest r = requests[Math.floorMod(seq, MAX_RECEIVES)];
            if (!r.active || (int) r.seq != seq || seq - (int) announcedTail >= 0 || buffer >= r.n || r.arrived[buffer]
                    || size < 0) {
                throw protocolError("DATA for receive " + seq + " buffer " + buffer + " that is not waiting for one");
            }
            // A large send that could not have gone ahead: the sender waits for each CTS from now
            // on, so hold none back.
            boolean needsCts = size > Wire.EAGER_SLOT_BYTES && (flags & Wire.FLAG_AHEAD_OK) == 0;
            if (needsCts && !streaming) {
                ctsWanted = true;
            }
            streaming = needsCts;
            if ((flags & Wire.FLAG_OVERSIZE) != 0) {
                in.consume(Wire.DATA_HEADER);
                r.error = NetException.invalidUsage(peer + " sent " + size + " bytes to a "
                        + r.buffers[buffer].byteSize() + "-byte receive buffer (tag " + r.tags[buffer]
                        + "); nothing was received");
                arrived(r, buffer, 0);
                continue;
            }
            if (size > r.buffers[buffer].byteSize()) {
                throw protocolError("DATA of " + size + " bytes for a " + r.buffers[buffer].byteSize() + "-byte buffer");
            }
            boolean inline = (flags & Wire.FLAG_INLINE) != 0;
            if (inline) {
                // The sender's inline limit may differ from ours; the protocol's bound is the same for all.
                if (size > Wire.MAX_INLINE) {
                    throw protocolError("inline DATA of " + size + " bytes");
                }
                if (!buffered(Wire.DATA_HEADER + (int) size)) {
                    return;
                }
            } else if (streams.length > 0 && !streamsHaveRoom(size)) {
                return;
            }
            land(r, buffer, size, inline);
        }
    }

    /**
     * Consumes a frame's header and takes its payload into buffer {@code buffer} of {@code r}:
     * inline from the control stream, over the data streams, or after the frame. The caller has
     * checked that it can be taken now (all of an inline payload buffered, room on the streams).
     */
    private void land(RecvRequest r, int buffer, long size, boolean inline) {
        in.consume(Wire.DATA_HEADER);
        if (inline) {
            in.copyTo(r.regions[buffer].memory, r.offsets[buffer], (int) size);
            readAhead = ControlIn.BUFFER_BYTES;
        } else if (streams.length > 0) {
            r.addPending(size);
            stripe(r.regions[buffer], r.offsets[buffer], size, r);
            lastStripedSeq = r.seq;
            stampRead(); // its frame was just parsed: as good as a read
        } else {
            r.addPending(size);
            payloadRequest = r;
            payloadRegion = r.regions[buffer];
            payloadOffset = r.offsets[buffer];
            payloadRemaining = size;
            lastInboundNanos = System.nanoTime();
            readAhead = Wire.DATA_HEADER;
        }
        arrived(r, buffer, size);
    }

    /** @return the first buffer of {@code r} with tag {@code tag} that nothing has arrived in, or -1 */
    private static int freeBuffer(RecvRequest r, int tag) {
        for (int i = 0; i < r.n; i++) {
            if (!r.arrived[i] && r.tags[i] == tag) {
                return i;
            }
        }
        return -1;
    }

    private void arrived(RecvRequest r, int buffer, long size) {
        r.arrived[buffer] = true;
        r.sizes[buffer] = (int) size;
        r.announced++;
        while (placeHead < requestTail) {
            RecvRequest head = requests[(int) (placeHead % MAX_RECEIVES)];
            if (head.active && head.seq == placeHead && head.announced < head.n) {
                break;
            }
            placeHead++;
        }
    }

    /** Takes one EAGER frame if it is all buffered. @return whether it was */
    private boolean readEager() throws IOException, NetException {
        int tag = in.intAt(4);
        long size = in.longAt(8);
        if ((in.byteAt(2) & Wire.FLAG_AHEAD) != 0) {
            return takeSentAhead(tag, size, (in.byteAt(2) & Wire.FLAG_INLINE) != 0);
        }
        if (size < 0 || size > Wire.EAGER_SLOT_BYTES) {
            throw protocolError("EAGER of " + size + " bytes");
        }
        if (!buffered(Wire.DATA_HEADER + (int) size)) {
            return false;
        }
        in.consume(Wire.DATA_HEADER);
        if (eagerHead == eagerTail && placeHead < requestTail) {
            placeEager(tag, (int) size, null, 0);
            return true;
        }
        if (eagerTail - eagerHead == Wire.EAGER_SLOTS) {
            throw protocolError("more than " + Wire.EAGER_SLOTS + " EAGERs ahead of their receives");
        }
        int e = (int) (eagerTail++ % Wire.EAGER_SLOTS);
        eagerTag[e] = tag;
        eagerSize[e] = (int) size;
        in.copyTo(eagerSlots, (long) e * Wire.EAGER_SLOT_BYTES, (int) size);
        return true;
    }

    /**
     * Takes an EAGER sent ahead of its CTS ({@link Wire#FLAG_AHEAD}) once its receive is posted and
     * the EAGERs before it are placed; until then it stays in the control stream, and its payload in
     * the sockets.
     *
     * @return whether it was taken
     */
    private boolean takeSentAhead(int tag, long size, boolean inline) throws IOException, NetException {
        if (size < 0 || inline && size > Wire.MAX_INLINE) {
            throw protocolError("EAGER ahead of " + size + " bytes");
        }
        if (eagerHead != eagerTail || placeHead == requestTail) {
            return false;
        }
        if (inline && !buffered(Wire.DATA_HEADER + (int) size)) {
            return false;
        }
        if (!inline && streams.length > 0 && !streamsHaveRoom(size)) {
            return false;
        }
        RecvRequest r = requests[(int) (placeHead % MAX_RECEIVES)];
        int buffer = freeBuffer(r, tag);
        if (buffer < 0 || size > r.buffers[buffer].byteSize()) {
            // Its bytes have nowhere to go and cannot be skipped without reading them: the comm
            // fails, and the sender's when this receive's CTS reaches it.
            throw NetException.invalidUsage(peer + " sent " + size + " bytes (tag " + tag + ") ahead of receive "
                    + r.seq + (buffer < 0 ? ", which has no free buffer of that tag"
                    : ", whose buffer holds " + r.buffers[buffer].byteSize()) + ": sends and receives must match");
        }
        land(r, buffer, size, inline);
        return true;
    }

    /** Places the EAGERs that waited, now that receives are posted for them. */
    private void placeWaitingEagers() throws NetException {
        while (eagerHead != eagerTail && placeHead < requestTail) {
            int e = (int) (eagerHead % Wire.EAGER_SLOTS);
            placeEager(eagerTag[e], eagerSize[e], eagerSlots, (long) e * Wire.EAGER_SLOT_BYTES);
            eagerHead++;
        }
    }

    /**
     * Puts an EAGER's payload (from {@code from}, or from the control stream when null, consuming it)
     * into the oldest receive not yet full, in its first unfilled buffer of {@code tag}.
     */
    private void placeEager(int tag, int size, MemorySegment from, long fromOffset) throws NetException {
        RecvRequest r = requests[(int) (placeHead % MAX_RECEIVES)];
        int buffer = freeBuffer(r, tag);
        if (buffer < 0) {
            throw NetException.invalidUsage(peer + " sent a message with tag " + tag + " that matches no free buffer "
                    + "of receive " + r.seq + ": sends and receives match in posting order");
        }
        if (size > r.buffers[buffer].byteSize()) {
            r.error = NetException.invalidUsage(peer + " sent " + size + " bytes to a " + r.buffers[buffer].byteSize()
                    + "-byte receive buffer (tag " + tag + "); nothing was received");
            ctsWanted = true; // the sender learns it from this receive's CTS
            if (from == null) {
                in.consume(size);
            }
            arrived(r, buffer, 0);
            return;
        }
        if (from == null) {
            in.copyTo(r.regions[buffer].memory, r.offsets[buffer], size);
        } else {
            MemorySegment.copy(from, fromOffset, r.regions[buffer].memory, r.offsets[buffer], size);
        }
        arrived(r, buffer, size);
    }

    /** Moves payload that follows a DATA frame on the control stream. @return whether it is complete */
    private boolean movePayload() throws IOException {
        while (payloadRemaining > 0) {
            int n;
            if (in.available() > 0) {
                n = (int) Math.min(in.available(), payloadRemaining);
                in.copyTo(payloadRegion.memory, payloadOffset, n);
            } else {
                n = in.readDirect(payloadRegion, payloadOffset, (int) Math.min(payloadRemaining, MemoryRegion.WINDOW_STEP));
                if (n == 0) {
                    return false;
                }
            }
            payloadOffset += n;
            payloadRemaining -= n;
            payloadRequest.moved(n);
            lastInboundNanos = System.nanoTime();
        }
        payloadRequest = null;
        payloadRegion = null;
        return true;
    }

    private boolean buffered(int bytes) throws IOException {
        while (in.available() < bytes) {
            if (in.drained() || in.fill(Math.max(readAhead, bytes - in.available())) == 0) {
                return false;
            }
        }
        return true;
    }

    @Override
    boolean inboundInFlight() {
        return payloadRemaining > 0;
    }

    @Override
    long lastInboundNanos() {
        return lastInboundNanos;
    }

    private NetException protocolError(String what) {
        return NetException.internalError("JcclSocket protocol error on the connection from " + peer + ": " + what);
    }
}
