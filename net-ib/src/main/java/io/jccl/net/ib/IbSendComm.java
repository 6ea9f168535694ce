package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;
import io.jccl.net.ib.verbs.IbvLayouts.SendWr;
import io.jccl.net.ib.verbs.IbvLayouts.Sge;
import io.jccl.net.ib.verbs.VerbsOps;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.SendComm;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The sending end of a connection (NCCL's {@code ncclIbSendComm}).
 *
 * <p>The receiver announces each posted receive by RDMA-writing a FIFO slot here ({@link CtsFifo}).
 * {@code isend} matches the next slot: it waits ({@code null}) until the slot's entries carry the
 * expected stamp, takes the first free entry with its tag, and once every entry of the slot has a
 * send, writes the data with RDMA writes, split over the slot's queue pairs in 128-byte aligned
 * parts and into writes of at most the port's {@code max_msg_sz}. A single-buffer slot ends each
 * queue pair's part with RDMA_WRITE_WITH_IMM carrying the size; a grouped slot ends with a
 * WRITE_WITH_IMM of the sizes array into the receiver's completion records. Only those last writes
 * are signaled: their completions complete the slot's requests.
 *
 * <p>Posting is resumable: when a send queue is full, the rest of the slot is posted by later
 * {@code isend} and {@code test} calls, so a message of any size goes through a queue of any depth.
 *
 * <p>A message larger than its buffer is not written: the WRITE_WITH_IMM carries -1 instead of a
 * size and both sides' requests fail with {@code ncclInvalidUsage} (NCCL's IB silently truncates).
 */
final class IbSendComm extends IbComm implements SendComm {
    private static final int CHAIN = 32;
    private static final byte FREE = 0;
    private static final byte FILLING = 1;
    private static final byte POSTING = 2;
    private static final byte POSTED = 3;
    /** NCCL's IB_WRITE_CHUNK_ALIGNMENT: a part boundary never splits an LL/LL128 line. */
    private static final long PART_ALIGNMENT = 128;
    private static final int SEND_QUEUE_DEPTH = 1024;
    private static final VarHandle LONG = JAVA_LONG.varHandle();

    private MemorySegment fifo;
    private MemorySegment fifoMr;
    private MemorySegment sizes;
    private MemorySegment sizesMr;
    private int sizesLkey;
    private final MemorySegment chain;
    private final long sgeBase;
    private final long maxWrite;
    private final long peerTimeoutNanos;
    private long remoteRecordsAddress;
    private int remoteRecordsRkey;

    private final byte[] slotState = new byte[SLOTS];
    private final int[] slotTaken = new int[SLOTS];
    private final int[] slotEntries = new int[SLOTS];
    private final int[] slotEvents = new int[SLOTS];
    private final long[] slotSeq = new long[SLOTS];
    private final long[] slotDoneSeq = new long[SLOTS];
    private final long[] slotBytes = new long[SLOTS];
    private final SendRequest[] slotRequests = new SendRequest[SLOTS * MAX_RECVS];

    private final SendRequest[] pool = new SendRequest[SLOTS * MAX_RECVS];
    private int poolTop;

    /** The slot {@code isend} fills next. */
    private long head;
    /** The oldest slot not yet fully posted. */
    private long postSeq;
    /** The oldest slot not yet complete. */
    private long doneSeq;
    private int cursorQp;
    private int cursorEntry;
    private int cursorStage;
    private long cursorOffset;
    private int chainCount;
    private QueuePair chainQp;
    private long watchdogStart;

    private IbSendComm(IbDevice device, IbConfig config, NetLogger logger, int nqps, int depth) throws NetException {
        super(device, config, logger, nqps, config.splitDataOnQps(), depth, 0, nqps * depth + 4 * SLOTS,
                Ibv.ACCESS_REMOTE_WRITE);
        this.chain = unscoped(arena.allocate(CHAIN * (SendWr.SIZE + Sge.SIZE), 64));
        this.sgeBase = CHAIN * SendWr.SIZE;
        long chunk = Math.min(device.maxMessage() <= 0 ? 1L << 30 : device.maxMessage(), 1L << 30);
        this.maxWrite = Math.max(PART_ALIGNMENT, chunk & -PART_ALIGNMENT);
        this.peerTimeoutNanos = config.peerTimeoutMs() * 1_000_000L;
        for (int i = 0; i < pool.length; i++) {
            pool[i] = new SendRequest(this);
        }
        poolTop = pool.length;
        java.util.Arrays.fill(slotDoneSeq, -1);
    }

    /**
     * Creates the comm's queue pairs (INIT) and registers its FIFO and sizes shadow.
     *
     * @throws NetException if the device refuses; nothing is left allocated
     */
    static IbSendComm create(IbDevice device, IbConfig config, NetLogger logger) throws NetException {
        int nqps = config.qpsPerConnection();
        IbSendComm comm = new IbSendComm(device, config, logger, nqps,
                sendQueueDepth(device.hca(), SEND_QUEUE_DEPTH, nqps));
        try {
            comm.fifo = comm.arena.allocate(SLOTS * SLOT_BYTES, 4096);
            comm.fifoMr = comm.registerPrivate(comm.fifo,
                    Ibv.ACCESS_LOCAL_WRITE | Ibv.ACCESS_REMOTE_WRITE | Ibv.ACCESS_REMOTE_READ);
            comm.sizes = comm.arena.allocate((long) SLOTS * MAX_RECVS * Integer.BYTES, 4096);
            comm.sizesMr = comm.registerPrivate(comm.sizes, Ibv.ACCESS_LOCAL_WRITE);
            comm.sizesLkey = comm.sizesMr.get(JAVA_INT, io.jccl.net.ib.verbs.IbvLayouts.Mr.LKEY);
            return comm;
        } catch (NetException | RuntimeException e) {
            try {
                comm.close();
            } catch (NetException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** @return the HELLO of the handshake: the FIFO the receiver writes into */
    ConnectionInfo hello(byte[] secret) {
        return new ConnectionInfo(ConnectionInfo.HELLO, secret, splitData, localAddress(), fifo.address(),
                fifoMr.get(JAVA_INT, io.jccl.net.ib.verbs.IbvLayouts.Mr.RKEY), localQpns());
    }

    /** Connects the queue pairs to the receiver's and records its completion records. */
    void connect(ConnectionInfo reply) throws NetException {
        connectQueuePairs(reply.qpns(), reply.peer());
        remoteRecordsAddress = reply.bufferAddress();
        remoteRecordsRkey = reply.bufferRkey();
    }

    // ---- isend ----

    NetRequest isend(MemorySegment data, int tag, IbMemoryHandle mh) throws NetException {
        ensureUsable();
        long size = data.byteSize();
        long address = data.address();
        if (mh.hca != hca || !mh.covers(address, size) || mh.released) {
            throw NetException.invalidArgument("isend: " + size + " bytes at 0x" + Long.toHexString(address)
                    + " are not inside the registration " + mh + (mh.released ? " (released)" : ""));
        }
        if (size > Integer.MAX_VALUE) {
            throw NetException.invalidUsage("isend: " + size + " bytes exceed the largest message (2^31-1 bytes)");
        }
        if (postSeq < head) {
            postPending();
        }
        int s = slot(head);
        byte state = slotState[s];
        if (state == POSTING || state == POSTED) {
            progress(); // the slot's previous message has not completed here yet
            if (slotState[s] != FREE) {
                watchPeer();
                return null;
            }
        }
        long base = s * SLOT_BYTES;
        long expect = head + 1;
        if (!entryReady(base, expect)) {
            watchPeer();
            return null;
        }
        int n = fifo.get(JAVA_INT, base + CtsFifo.NREQS);
        if (n < 1 || n > MAX_RECVS) {
            fail(NetException.remoteError("corrupt clear-to-send entry from " + peerName() + ": " + n + " buffers"));
            throw rethrow(failure());
        }
        for (int r = 1; r < n; r++) {
            if (!entryReady(base + r * CtsFifo.ENTRY, expect)) {
                return null;
            }
        }
        int taken = slotTaken[s];
        int entry = -1;
        for (int r = 0; r < n; r++) {
            if ((taken & (1 << r)) == 0 && fifo.get(JAVA_INT, base + r * CtsFifo.ENTRY + CtsFifo.TAG) == tag) {
                entry = r;
                break;
            }
        }
        if (entry < 0) {
            throw NetException.invalidUsage("isend with tag " + tag + " matches no free buffer of the peer's receive "
                    + "number " + head + " (" + n + " buffers): sends and receives match in posting order");
        }
        if (poolTop == 0) {
            return null;
        }
        SendRequest req = pool[--poolTop];
        long capacity = fifo.get(JAVA_LONG, base + entry * CtsFifo.ENTRY + CtsFifo.SIZE);
        req.state = IbRequest.PENDING;
        req.error = null;
        req.seq = head;
        req.entry = entry;
        req.address = address;
        req.size = size;
        req.lkey = mh.lkey;
        req.oversize = size > capacity;
        slotState[s] = FILLING;
        slotTaken[s] = taken | (1 << entry);
        slotRequests[s * MAX_RECVS + entry] = req;
        if (Integer.bitCount(slotTaken[s]) == n) {
            startSlot(s, n);
        }
        return req;
    }

    /** An entry is whole when the stamps at both of its ends say {@code expect}. */
    private boolean entryReady(long at, long expect) {
        return (long) LONG.getAcquire(fifo, at + CtsFifo.IDX_CHECK) == expect
                && (long) LONG.getAcquire(fifo, at + CtsFifo.IDX) == expect;
    }

    /** Every entry of slot {@code s} has its send: queue the slot for posting. */
    private void startSlot(int s, int n) {
        long bytes = 0;
        int sizesAt = s * MAX_RECVS;
        for (int r = 0; r < n; r++) {
            SendRequest q = slotRequests[s * MAX_RECVS + r];
            bytes += q.oversize ? 0 : q.size;
            sizes.setAtIndex(JAVA_INT, sizesAt + r, q.oversize ? -1 : (int) q.size);
        }
        slotEntries[s] = n;
        slotEvents[s] = qpsPerRequest;
        slotSeq[s] = head;
        slotBytes[s] = bytes;
        slotState[s] = POSTING;
        head++;
        postPending();
    }

    // ---- posting ----

    /** Posts the queued slots in order, as far as the send queues allow. */
    private void postPending() {
        while (postSeq < head && failure() == null) {
            int s = slot(postSeq);
            if (!postSlot(s)) {
                return;
            }
            if (slotState[s] == POSTING) {
                slotState[s] = POSTED;
            }
            if (doneSeq == postSeq) {
                watchdogStart = System.nanoTime();
            }
            postSeq++;
            cursorQp = 0;
            cursorEntry = 0;
            cursorStage = 0;
            cursorOffset = 0;
        }
    }

    /**
     * Posts slot {@code s} from the cursor on.
     *
     * @return whether the whole slot is posted; {@code false} if a send queue filled up (or the comm
     *         failed) and the rest must wait
     */
    private boolean postSlot(int s) {
        int n = slotEntries[s];
        long seq = slotSeq[s];
        while (cursorQp < qpsPerRequest) {
            QueuePair qp = qps[(int) ((seq * qpsPerRequest + cursorQp) % qps.length)];
            if (cursorStage == 0) {
                while (cursorEntry < n) {
                    SendRequest r = slotRequests[s * MAX_RECVS + cursorEntry];
                    long size = r.oversize ? 0 : r.size;
                    long part = partSize(size);
                    long lo = Math.min(size, cursorQp * part);
                    long hi = Math.min(size, lo + part);
                    long entryAt = s * SLOT_BYTES + cursorEntry * CtsFifo.ENTRY;
                    long remote = fifo.get(JAVA_LONG, entryAt + CtsFifo.ADDR);
                    int rkey = fifo.get(JAVA_INT, entryAt + CtsFifo.RKEY);
                    while (lo + cursorOffset < hi) {
                        long off = lo + cursorOffset;
                        long len = Math.min(hi - off, maxWrite);
                        boolean last = n == 1 && off + len == hi;
                        if (!append(qp, last ? Ibv.WR_RDMA_WRITE_WITH_IMM : Ibv.WR_RDMA_WRITE, r.address + off, len,
                                r.lkey, remote + off, rkey, (int) r.size, last, s)) {
                            return false;
                        }
                        cursorOffset += len;
                    }
                    cursorEntry++;
                    cursorOffset = 0;
                }
                cursorStage = 1;
            }
            if (cursorStage == 1) {
                boolean ok = true;
                if (n > 1) {
                    long at = (long) s * MAX_RECVS * Integer.BYTES;
                    ok = append(qp, Ibv.WR_RDMA_WRITE_WITH_IMM, sizes.address() + at, (long) n * Integer.BYTES,
                            sizesLkey, remoteRecordsAddress + at, remoteRecordsRkey, n, true, s);
                } else {
                    SendRequest r = slotRequests[s * MAX_RECVS];
                    long size = r.oversize ? 0 : r.size;
                    long lo = Math.min(size, cursorQp * partSize(size));
                    long hi = Math.min(size, lo + partSize(size));
                    if (lo == hi) { // nothing for this queue pair: a zero-byte write carries the completion
                        long entryAt = s * SLOT_BYTES;
                        ok = append(qp, Ibv.WR_RDMA_WRITE_WITH_IMM, 0, 0, 0, fifo.get(JAVA_LONG, entryAt + CtsFifo.ADDR),
                                fifo.get(JAVA_INT, entryAt + CtsFifo.RKEY), r.oversize ? -1 : (int) r.size, true, s);
                    }
                }
                if (!ok) {
                    return false;
                }
                cursorStage = 2;
            }
            if (!postChain()) {
                return false;
            }
            cursorQp++;
            cursorEntry = 0;
            cursorStage = 0;
            cursorOffset = 0;
        }
        return true;
    }

    /** @return the bytes of a message each of the slot's queue pairs carries, 128-byte aligned */
    private long partSize(long size) {
        if (qpsPerRequest == 1) {
            return size;
        }
        long part = (size + qpsPerRequest - 1) / qpsPerRequest;
        return (part + PART_ALIGNMENT - 1) & -PART_ALIGNMENT;
    }

    /**
     * Adds one RDMA write to the chain for {@code qp}, posting the chain when it is full or belongs
     * to another queue pair.
     *
     * @return {@code false} if {@code qp}'s send queue is full (what was chained is posted)
     */
    private boolean append(QueuePair qp, int opcode, long local, long length, int lkey, long remote, int rkey, int imm,
            boolean last, int s) {
        if (chainQp != qp && chainCount > 0 && !postChain()) {
            return false;
        }
        chainQp = qp;
        if (qp.freeSendSlots() <= 0) {
            postChain();
            return false;
        }
        if (chainCount == CHAIN && !postChain()) {
            return false;
        }
        boolean signaled = last || qp.signalDue();
        long id = qp.nextId(last ? WorkId.DATA : WorkId.DRAIN, s, signaled);
        long w = chainCount * SendWr.SIZE;
        long sge = sgeBase + chainCount * Sge.SIZE;
        chain.set(JAVA_LONG, w + SendWr.WR_ID, id);
        chain.set(JAVA_LONG, w + SendWr.NEXT, chain.address() + w + SendWr.SIZE);
        chain.set(JAVA_LONG, w + SendWr.SG_LIST, chain.address() + sge);
        chain.set(JAVA_INT, w + SendWr.NUM_SGE, length > 0 ? 1 : 0);
        chain.set(JAVA_INT, w + SendWr.OPCODE, opcode);
        chain.set(JAVA_INT, w + SendWr.SEND_FLAGS, signaled ? Ibv.SEND_SIGNALED : 0);
        chain.set(IMM, w + SendWr.IMM_DATA, imm);
        chain.set(JAVA_LONG, w + SendWr.REMOTE_ADDR, remote);
        chain.set(JAVA_INT, w + SendWr.RKEY, rkey);
        chain.set(JAVA_LONG, sge + Sge.ADDR, local);
        chain.set(JAVA_INT, sge + Sge.LENGTH, (int) length);
        chain.set(JAVA_INT, sge + Sge.LKEY, lkey);
        chainCount++;
        return true;
    }

    /** Posts the chained work requests with one {@code post_send}. @return false if it failed */
    private boolean postChain() {
        if (chainCount == 0) {
            return true;
        }
        chain.set(JAVA_LONG, (chainCount - 1) * SendWr.SIZE + SendWr.NEXT, 0L);
        int rc = VerbsOps.postSend(postSendFn, chainQp.qp, chain, badWr);
        chainCount = 0;
        if (rc != 0) {
            fail(new NetException(NetResult.SYSTEM_ERROR, device.uniqueName() + ": post_send failed on " + chainQp
                    + ": errno " + rc));
            return false;
        }
        return true;
    }

    // ---- completions ----

    @Override
    void onCompletion(long wrId, int opcode, int imm, int byteLength) {
        int qpIndex = WorkId.qpIndex(wrId);
        if (qpIndex < qps.length) {
            qps[qpIndex].retire(WorkId.sequence(wrId));
        }
        if (WorkId.kind(wrId) != WorkId.DATA || failure() != null) {
            return;
        }
        watchdogStart = System.nanoTime();
        int s = WorkId.slot(wrId);
        if ((slotState[s] == POSTED || slotState[s] == POSTING) && --slotEvents[s] == 0) {
            completeSlot(s);
        }
    }

    private void completeSlot(int s) {
        int n = slotEntries[s];
        for (int r = 0; r < n; r++) {
            SendRequest q = slotRequests[s * MAX_RECVS + r];
            slotRequests[s * MAX_RECVS + r] = null;
            q.state = IbRequest.DONE;
        }
        slotState[s] = FREE;
        slotTaken[s] = 0;
        slotDoneSeq[s] = slotSeq[s];
        while (doneSeq < postSeq && slotDoneSeq[slot(doneSeq)] == doneSeq) {
            doneSeq++;
        }
    }

    /** Fails the comm if the oldest posted slot has seen no completion for too long. */
    private void checkWatchdog() {
        if (doneSeq >= postSeq) {
            return;
        }
        long waited = System.nanoTime() - watchdogStart;
        long bytes = slotBytes[slot(doneSeq)];
        long limit = peerTimeoutNanos + bytes * 8_000L / Math.max(1, device.speedMbps());
        if (waited > limit) {
            fail(NetException.remoteError("no RDMA completion from " + peerName() + " for " + waited / 1_000_000
                    + " ms (a " + bytes + "-byte message; bound " + limit / 1_000_000 + " ms, "
                    + IbConfig.JCCL_IB_PEER_TIMEOUT_MS + "=" + config.peerTimeoutMs()
                    + "): the peer is dead or unreachable"));
        }
    }

    @Override
    void onPeerClose(long completed) {
        // the receiver saw these messages arrive: they are delivered even if our ACKs are still on the way
        for (long seq = doneSeq; seq < Math.min(completed, postSeq); seq++) {
            int s = slot(seq);
            if (slotSeq[s] == seq && (slotState[s] == POSTED || slotState[s] == POSTING)) {
                completeSlot(s);
            }
        }
    }

    @Override
    long completedInOrder() {
        return doneSeq;
    }

    // ---- test ----

    boolean test(SendRequest r, int[] sizesOut) throws NetException {
        if (r.state == IbRequest.FREE) {
            throw NetException.internalError("test on a send request that already completed");
        }
        if (r.state == IbRequest.PENDING && !closed) {
            if (postSeq < head) {
                postPending();
            }
            progress();
            if (r.state == IbRequest.PENDING) {
                watchPeer();
                checkWatchdog();
            }
        }
        if (r.state == IbRequest.DONE) {
            boolean oversize = r.oversize;
            long size = r.size;
            release(r);
            if (oversize) {
                throw NetException.invalidUsage("isend of " + size + " bytes to " + peerName()
                        + " is larger than the receive buffer the peer posted; nothing was sent");
            }
            if (sizesOut != null && sizesOut.length > 0) {
                sizesOut[0] = (int) size;
            }
            return true;
        }
        NetException f = failure();
        if (f != null) {
            release(r);
            throw rethrow(f);
        }
        return false;
    }

    private void release(SendRequest r) {
        r.state = IbRequest.FREE;
        pool[poolTop++] = r;
    }

    @Override
    String releasePrivate(String problem) {
        return releaseMr(sizesMr, releaseMr(fifoMr, problem));
    }
}
