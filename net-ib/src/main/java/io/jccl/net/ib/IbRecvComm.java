package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;
import io.jccl.net.ib.verbs.IbvLayouts;
import io.jccl.net.ib.verbs.IbvLayouts.RecvWr;
import io.jccl.net.ib.verbs.IbvLayouts.SendWr;
import io.jccl.net.ib.verbs.IbvLayouts.Sge;
import io.jccl.net.ib.verbs.VerbsException;
import io.jccl.net.ib.verbs.VerbsOps;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The receiving end of a connection (NCCL's {@code ncclIbRecvComm}).
 *
 * <p>{@code irecv} takes the next FIFO slot, posts one receive work request on each queue pair the
 * message will use (a WRITE_WITH_IMM consumes one), describes its buffers in the slot's entries and
 * RDMA-writes them into the sender's FIFO. Each queue pair's WRITE_WITH_IMM completes here; once
 * all have, the sizes are the immediate (one buffer) or the completion record the sender wrote
 * (grouped receive).
 *
 * <p>{@code iflush} reads one byte of the last non-empty buffer with an RDMA read on a loopback
 * queue pair (spec 8.5): the read completes only after the adapter's earlier writes into that
 * memory are visible. Host memory needs no flush; {@code JCCL_IB_FLUSH_HOST_MEMORY=1} flushes it
 * anyway, which is how the path is checked without a GPU.
 */
final class IbRecvComm extends IbComm implements RecvComm {
    private static final int FLUSH_QP_INDEX = 255;

    private MemorySegment shadow;
    private MemorySegment shadowMr;
    private int shadowLkey;
    private MemorySegment records;
    private MemorySegment recordsMr;
    private final MemorySegment recvWr;
    private final MemorySegment ctsWr;
    private final MemorySegment ctsSge;
    private final long remoteFifoAddress;
    private final int remoteFifoRkey;
    private final long peerTimeoutNanos;

    private final RecvRequest[] requests = new RecvRequest[SLOTS];
    private final long[] slotDoneSeq = new long[SLOTS];
    private long head;
    private long doneSeq;
    private long peerCompleted = -1;
    private long graceDeadline;

    private QueuePair flushQp;
    private MemorySegment flushBuffer;
    private MemorySegment flushMr;
    private int flushLkey;
    private final FlushRequest[] flushRequests = new FlushRequest[SLOTS];
    private final int[] flushFree = new int[SLOTS];
    private int flushTop;
    private final MemorySegment flushWr;

    private IbRecvComm(IbDevice device, IbConfig config, NetLogger logger, ConnectionInfo hello) throws NetException {
        super(device, config, logger, hello.qpns().length, hello.splitData(), 2 * SLOTS, SLOTS,
                hello.qpns().length * (SLOTS + 2 * SLOTS) + 4 * SLOTS,
                Ibv.ACCESS_REMOTE_WRITE | Ibv.ACCESS_REMOTE_READ);
        this.remoteFifoAddress = hello.bufferAddress();
        this.remoteFifoRkey = hello.bufferRkey();
        this.peerTimeoutNanos = config.peerTimeoutMs() * 1_000_000L;
        this.recvWr = unscoped(arena.allocate(RecvWr.LAYOUT));
        this.ctsWr = unscoped(arena.allocate(SendWr.LAYOUT));
        this.ctsSge = unscoped(arena.allocate(Sge.LAYOUT));
        this.flushWr = unscoped(arena.allocate(SendWr.SIZE + Sge.SIZE, 64));
        for (int s = 0; s < SLOTS; s++) {
            requests[s] = new RecvRequest(this, s);
            flushRequests[s] = new FlushRequest(this, s);
            flushFree[s] = s;
        }
        flushTop = SLOTS;
        java.util.Arrays.fill(slotDoneSeq, -1);
    }

    /**
     * Creates the comm for a sender's HELLO: queue pairs connected to the sender's (RTS), the FIFO
     * shadow and completion records registered, and the loopback flush queue pair if flushing is on.
     *
     * @throws NetException if the device refuses; nothing is left allocated
     */
    static IbRecvComm create(IbDevice device, IbConfig config, NetLogger logger, ConnectionInfo hello)
            throws NetException {
        IbRecvComm comm = new IbRecvComm(device, config, logger, hello);
        try {
            comm.shadow = comm.arena.allocate(SLOTS * SLOT_BYTES, 4096);
            comm.shadowMr = comm.registerPrivate(comm.shadow, Ibv.ACCESS_LOCAL_WRITE);
            comm.shadowLkey = comm.shadowMr.get(JAVA_INT, IbvLayouts.Mr.LKEY);
            comm.records = comm.arena.allocate((long) SLOTS * MAX_RECVS * Integer.BYTES, 4096);
            comm.recordsMr = comm.registerPrivate(comm.records, Ibv.ACCESS_LOCAL_WRITE | Ibv.ACCESS_REMOTE_WRITE);
            comm.connectQueuePairs(hello.qpns(), hello.peer());
            if (config.flushHostMemory() && !config.gdrFlushDisable()) {
                comm.createFlushQueuePair();
            }
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

    /** A queue pair connected to itself, and a 4-byte target for its reads (NCCL's gpuFlush). */
    private void createFlushQueuePair() throws NetException {
        try {
            flushQp = QueuePair.create(hca, cq, FLUSH_QP_INDEX, 2 * SLOTS, 1);
            hca.own(flushQp.qp, this);
            flushQp.toInit(device.port(), config.pkeyIndex(), Ibv.ACCESS_LOCAL_WRITE | Ibv.ACCESS_REMOTE_READ);
            flushQp.toRtr(device, flushQp.qpn, localAddress(), config.trafficClass(), config.serviceLevel());
            flushQp.toRts(config.timeout(), config.retryCount());
        } catch (VerbsException e) {
            throw new NetException(NetResult.SYSTEM_ERROR, device.uniqueName() + ": cannot create the flush queue pair: "
                    + e.getMessage(), e);
        }
        flushBuffer = arena.allocate(4, 64);
        flushMr = registerPrivate(flushBuffer, Ibv.ACCESS_LOCAL_WRITE);
        flushLkey = flushMr.get(JAVA_INT, IbvLayouts.Mr.LKEY);
    }

    /** @return the REPLY of the handshake: the completion records the sender writes sizes into */
    ConnectionInfo reply(byte[] secret) {
        return new ConnectionInfo(ConnectionInfo.REPLY, secret, splitData, localAddress(), records.address(),
                recordsMr.get(JAVA_INT, IbvLayouts.Mr.RKEY), localQpns());
    }

    // ---- irecv ----

    NetRequest irecv(int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles) throws NetException {
        ensureUsable();
        if (n < 1 || n > MAX_RECVS) {
            throw NetException.internalError("irecv of " + n + " buffers: JcclIB takes 1 to " + MAX_RECVS);
        }
        int s = slot(head);
        RecvRequest req = requests[s];
        QueuePair ctsQp = qps[0];
        if (req.state != IbRequest.FREE || ctsQp.freeSendSlots() <= 0) {
            progress();
            if (req.state != IbRequest.FREE || ctsQp.freeSendSlots() <= 0) {
                watchPeer();
                return null;
            }
        }
        for (int i = 0; i < n; i++) {
            if (!(mhandles[i] instanceof IbMemoryHandle mh) || mh.hca != hca || mh.released
                    || !mh.covers(data[i].address(), data[i].byteSize())) {
                throw NetException.invalidArgument("irecv: buffer " + i + " (" + data[i].byteSize() + " bytes at 0x"
                        + Long.toHexString(data[i].address()) + ") is not inside its registration " + mhandles[i]);
            }
        }
        // one receive work request per queue pair the message uses: each WRITE_WITH_IMM consumes one
        for (int i = 0; i < qpsPerRequest; i++) {
            QueuePair qp = qps[(int) ((head * qpsPerRequest + i) % qps.length)];
            recvWr.set(JAVA_LONG, RecvWr.WR_ID, WorkId.of(WorkId.RECV, s, qp.index, 0));
            recvWr.set(JAVA_LONG, RecvWr.NEXT, 0L);
            recvWr.set(JAVA_LONG, RecvWr.SG_LIST, 0L);
            recvWr.set(JAVA_INT, RecvWr.NUM_SGE, 0);
            int rc = VerbsOps.postRecv(postRecvFn, qp.qp, recvWr, badWr);
            if (rc != 0) {
                fail(new NetException(NetResult.SYSTEM_ERROR, device.uniqueName() + ": post_recv failed on " + qp
                        + ": errno " + rc));
                throw rethrow(failure());
            }
        }
        long base = s * SLOT_BYTES;
        long stamp = head + 1;
        req.seq = head;
        req.n = n;
        req.events = qpsPerRequest;
        req.error = null;
        for (int i = 0; i < n; i++) {
            IbMemoryHandle mh = (IbMemoryHandle) mhandles[i];
            long at = base + i * CtsFifo.ENTRY;
            long capacity = Math.min(data[i].byteSize(), Integer.MAX_VALUE);
            req.capacity[i] = capacity;
            req.sizes[i] = 0;
            shadow.set(JAVA_LONG, at + CtsFifo.IDX, stamp);
            shadow.set(JAVA_LONG, at + CtsFifo.ADDR, data[i].address());
            shadow.set(JAVA_LONG, at + CtsFifo.SIZE, capacity);
            shadow.set(JAVA_INT, at + CtsFifo.RKEY, mh.rkey);
            shadow.set(JAVA_INT, at + CtsFifo.TAG, tags[i]);
            shadow.set(JAVA_INT, at + CtsFifo.NREQS, n);
            shadow.set(JAVA_LONG, at + CtsFifo.IDX_CHECK, stamp);
        }
        boolean signaled = ctsQp.signalDue();
        ctsWr.set(JAVA_LONG, SendWr.WR_ID, ctsQp.nextId(WorkId.CTS, s, signaled));
        ctsWr.set(JAVA_LONG, SendWr.NEXT, 0L);
        ctsWr.set(JAVA_LONG, SendWr.SG_LIST, ctsSge.address());
        ctsWr.set(JAVA_INT, SendWr.NUM_SGE, 1);
        ctsWr.set(JAVA_INT, SendWr.OPCODE, Ibv.WR_RDMA_WRITE);
        ctsWr.set(JAVA_INT, SendWr.SEND_FLAGS, signaled ? Ibv.SEND_SIGNALED : 0);
        ctsWr.set(JAVA_LONG, SendWr.REMOTE_ADDR, remoteFifoAddress + base);
        ctsWr.set(JAVA_INT, SendWr.RKEY, remoteFifoRkey);
        ctsSge.set(JAVA_LONG, Sge.ADDR, shadow.address() + base);
        ctsSge.set(JAVA_INT, Sge.LENGTH, (int) (n * CtsFifo.ENTRY));
        ctsSge.set(JAVA_INT, Sge.LKEY, shadowLkey);
        req.state = IbRequest.PENDING;
        head++;
        int rc = VerbsOps.postSend(postSendFn, ctsQp.qp, ctsWr, badWr);
        if (rc != 0) {
            fail(new NetException(NetResult.SYSTEM_ERROR, device.uniqueName() + ": post_send of the clear-to-send "
                    + "failed on " + ctsQp + ": errno " + rc));
        }
        return req;
    }

    // ---- iflush ----

    NetRequest iflush(int n, MemorySegment[] data, MemoryHandle[] mhandles) throws NetException {
        ensureUsable();
        if (flushQp == null) {
            return null;
        }
        int last = -1;
        for (int i = 0; i < n; i++) {
            if (data[i].byteSize() > 0) {
                last = i;
            }
        }
        if (last < 0) {
            return null;
        }
        if (!(mhandles[last] instanceof IbMemoryHandle mh) || mh.hca != hca
                || (mh.type == PointerType.HOST && !config.flushHostMemory())) {
            return null;
        }
        if (flushTop == 0) {
            throw NetException.internalError("iflush: more than " + SLOTS + " flushes in flight on one comm");
        }
        FlushRequest f = flushRequests[flushFree[--flushTop]];
        long sge = SendWr.SIZE;
        flushWr.set(JAVA_LONG, SendWr.WR_ID, flushQp.nextId(WorkId.FLUSH, f.index, true));
        flushWr.set(JAVA_LONG, SendWr.NEXT, 0L);
        flushWr.set(JAVA_LONG, SendWr.SG_LIST, flushWr.address() + sge);
        flushWr.set(JAVA_INT, SendWr.NUM_SGE, 1);
        flushWr.set(JAVA_INT, SendWr.OPCODE, Ibv.WR_RDMA_READ);
        flushWr.set(JAVA_INT, SendWr.SEND_FLAGS, Ibv.SEND_SIGNALED);
        flushWr.set(JAVA_LONG, SendWr.REMOTE_ADDR, data[last].address());
        flushWr.set(JAVA_INT, SendWr.RKEY, mh.rkey);
        flushWr.set(JAVA_LONG, sge + Sge.ADDR, flushBuffer.address());
        flushWr.set(JAVA_INT, sge + Sge.LENGTH, 1);
        flushWr.set(JAVA_INT, sge + Sge.LKEY, flushLkey);
        f.state = IbRequest.PENDING;
        int rc = VerbsOps.postSend(postSendFn, flushQp.qp, flushWr, badWr);
        if (rc != 0) {
            fail(new NetException(NetResult.SYSTEM_ERROR, device.uniqueName() + ": post_send of the flush read "
                    + "failed: errno " + rc));
        }
        return f;
    }

    // ---- completions ----

    @Override
    void onCompletion(long wrId, int opcode, int imm, int byteLength) {
        int kind = WorkId.kind(wrId);
        int s = WorkId.slot(wrId);
        switch (kind) {
            case WorkId.RECV -> {
                RecvRequest r = requests[s & (SLOTS - 1)];
                if (r.state != IbRequest.PENDING) {
                    return;
                }
                if (opcode != Ibv.WC_RECV_RDMA_WITH_IMM) {
                    fail(NetException.remoteError("unexpected receive completion (opcode " + opcode + ") from "
                            + peerName()));
                    return;
                }
                if (r.n == 1) {
                    r.sizes[0] = imm;
                }
                if (--r.events == 0) {
                    finish(r);
                }
            }
            case WorkId.FLUSH -> {
                flushQp.retire(WorkId.sequence(wrId));
                FlushRequest f = flushRequests[s & (SLOTS - 1)];
                if (f.state == IbRequest.PENDING) {
                    f.state = IbRequest.DONE;
                }
            }
            default -> {
                int qpIndex = WorkId.qpIndex(wrId);
                if (qpIndex < qps.length) {
                    qps[qpIndex].retire(WorkId.sequence(wrId));
                }
            }
        }
    }

    /** Every queue pair of the message has completed: read the sizes and complete the request. */
    private void finish(RecvRequest r) {
        if (r.n > 1) {
            int at = r.slot * MAX_RECVS;
            for (int i = 0; i < r.n; i++) {
                r.sizes[i] = records.getAtIndex(JAVA_INT, at + i);
            }
        }
        for (int i = 0; i < r.n; i++) {
            int size = r.sizes[i];
            if (size < 0) {
                r.error = "the peer " + peerName() + " sent a message larger than receive buffer " + i + " ("
                        + r.capacity[i] + " bytes); nothing was written";
            } else if (size > r.capacity[i]) {
                r.error = "the peer " + peerName() + " reported " + size + " bytes for receive buffer " + i + " of "
                        + r.capacity[i] + " bytes";
            }
        }
        r.state = IbRequest.DONE;
        slotDoneSeq[r.slot] = r.seq;
        while (doneSeq < head && slotDoneSeq[slot(doneSeq)] == doneSeq) {
            doneSeq++;
        }
    }

    @Override
    void onPeerClose(long completed) {
        // the sender saw these messages complete: their completions are certain to arrive here
        peerCompleted = completed;
        graceDeadline = System.nanoTime() + peerTimeoutNanos;
    }

    @Override
    long completedInOrder() {
        return doneSeq;
    }

    // ---- test ----

    boolean test(RecvRequest r, int[] sizesOut) throws NetException {
        if (r.state == IbRequest.FREE) {
            throw NetException.internalError("test on a receive request that already completed");
        }
        if (r.state == IbRequest.PENDING && !closed) {
            progress();
            if (r.state == IbRequest.PENDING) {
                watchPeer();
            }
        }
        if (r.state == IbRequest.DONE) {
            String error = r.error;
            if (sizesOut != null) {
                for (int i = 0; i < r.n && i < sizesOut.length; i++) {
                    sizesOut[i] = r.sizes[i];
                }
            }
            r.state = IbRequest.FREE;
            if (error != null) {
                throw NetException.invalidUsage(error);
            }
            return true;
        }
        NetException f = failure();
        if (f != null) {
            if (!closed && r.seq < peerCompleted && System.nanoTime() - graceDeadline < 0) {
                return false; // delivered by the sender before it closed: its completion is on the way
            }
            r.state = IbRequest.FREE;
            throw rethrow(f);
        }
        return false;
    }

    boolean test(FlushRequest f) throws NetException {
        if (f.state == IbRequest.FREE) {
            throw NetException.internalError("test on a flush request that already completed");
        }
        if (f.state == IbRequest.PENDING && !closed) {
            progress();
        }
        if (f.state == IbRequest.DONE) {
            f.state = IbRequest.FREE;
            flushFree[flushTop++] = f.index;
            return true;
        }
        NetException fl = failure();
        if (fl != null) {
            f.state = IbRequest.FREE;
            flushFree[flushTop++] = f.index;
            throw rethrow(fl);
        }
        return false;
    }

    @Override
    String releasePrivate(String problem) {
        if (flushQp != null) {
            hca.disown(flushQp.qp);
            try {
                flushQp.destroy();
            } catch (VerbsException e) {
                problem = problem == null ? e.getMessage() : problem;
            }
        }
        return releaseMr(flushMr, releaseMr(recordsMr, releaseMr(shadowMr, problem)));
    }
}
