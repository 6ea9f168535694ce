package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;
import io.jccl.net.ib.verbs.IbvLayouts;
import io.jccl.net.ib.verbs.Verbs;
import io.jccl.net.ib.verbs.VerbsException;
import io.jccl.net.ib.verbs.VerbsOps;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetResult;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * What a send comm and a receive comm share: a completion queue, the queue pairs of the
 * connection, the TCP side channel that stays open after the handshake, and the comm's failure.
 *
 * <p><b>Progress.</b> {@link #progress} polls the completion queue in batches and hands each
 * completion to the subclass. It runs inside {@code isend}, {@code irecv} and {@code test}; NCCL
 * gives a transport no other hook.
 *
 * <p><b>Failure.</b> A comm fails once: an error completion, a fatal async event, the peer's
 * ABORT or CLOSE, the side channel's end (the peer process is gone), or the sender's completion
 * watchdog. From then on every pending request fails at its next {@code test} and new requests are
 * refused; requests that had completed still report success. A comm that fails locally tells its
 * peer with an ABORT frame so that the peer's requests fail at once too.
 *
 * <p><b>Peer watch.</b> The plugin's {@link PeerWatch} thread waits on every side channel and
 * flags a comm whose channel becomes readable; the progress thread then reads it (no system call
 * on the data path otherwise). A process that exits closes its socket, so its peer learns of it at
 * once instead of after the queue pairs' retries ({@code NCCL_IB_TIMEOUT} 20 and 7 retries: half a
 * minute). TCP keepalive bounds the case of a host that vanishes.
 */
abstract sealed class IbComm permits IbSendComm, IbRecvComm {
    /** Receives in flight per comm: FIFO slots. A power of two. */
    static final int SLOTS = NetPlugin.MAX_REQUESTS;
    static final int MAX_RECVS = IbDevice.MAX_RECVS;
    /** Bytes of one FIFO slot: {@link #MAX_RECVS} entries of {@link CtsFifo#ENTRY} bytes. */
    static final long SLOT_BYTES = (long) MAX_RECVS * CtsFifo.ENTRY;
    private static final int WC_BATCH = 16;
    static final ValueLayout.OfInt IMM = JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN);

    final IbDevice device;
    final Hca hca;
    final IbConfig config;
    final NetLogger logger;
    final Arena arena;
    final MemorySegment cq;
    final QueuePair[] qps;
    final int qpsPerRequest;
    final boolean splitData;
    final MemorySegment pollCqFn;
    final MemorySegment postSendFn;
    final MemorySegment postRecvFn;
    final MemorySegment badWr;
    private final MemorySegment wc;

    private SocketChannel channel;
    private PeerWatch peerWatch;
    private volatile boolean peerSignalled;
    private String peerName = "peer";
    private final ByteBuffer controlIn = ByteBuffer.allocateDirect(ConnectionInfo.Control.SIZE);
    private final ByteBuffer controlOut = ByteBuffer.allocateDirect(ConnectionInfo.Control.SIZE);
    private final AtomicReference<NetException> failure = new AtomicReference<>();
    private boolean peerClosed;
    volatile boolean closed;

    /**
     * Creates the completion queue and the queue pairs (in INIT).
     *
     * @param nqps      queue pairs of the connection
     * @param maxSendWr send-queue depth of each
     * @param maxRecvWr receive-queue depth of each
     */
    IbComm(IbDevice device, IbConfig config, NetLogger logger, int nqps, boolean splitData, int maxSendWr,
            int maxRecvWr, int cqEntries, int access) throws NetException {
        this.device = device;
        this.hca = device.hca();
        this.config = config;
        this.logger = logger;
        this.splitData = splitData;
        this.qpsPerRequest = splitData ? nqps : 1;
        this.pollCqFn = hca.ops.pollCq();
        this.postSendFn = hca.ops.postSend();
        this.postRecvFn = hca.ops.postRecv();
        hca.checkUsable();
        this.arena = Arena.ofShared();
        this.wc = unscoped(arena.allocate(IbvLayouts.Wc.LAYOUT.byteSize() * WC_BATCH, 64));
        this.badWr = unscoped(arena.allocate(JAVA_LONG));
        this.qps = new QueuePair[nqps];
        MemorySegment createdCq = null;
        try {
            createdCq = Verbs.createCq(hca.context, Math.min(cqEntries, hca.maxCqe));
            hca.own(createdCq, this);
            for (int i = 0; i < nqps; i++) {
                qps[i] = QueuePair.create(hca, createdCq, i, maxSendWr, maxRecvWr);
                hca.own(qps[i].qp, this);
                qps[i].toInit(device.port(), config.pkeyIndex(), access);
            }
        } catch (VerbsException e) {
            this.cq = createdCq;
            destroyCq(destroyQueuePairs(null));
            arena.close();
            throw new NetException(NetResult.SYSTEM_ERROR, device.uniqueName() + ": cannot create the connection's "
                    + nqps + " queue pairs: " + e.getMessage(), e);
        }
        this.cq = createdCq;
    }

    /**
     * A view of {@code memory} with no owner: passing a segment of a shared arena to a downcall
     * costs an atomic acquire and release of the arena each time; the data path's work requests
     * and completion buffers skip that. The comm never touches them after {@link #close} frees the
     * arena.
     */
    @SuppressWarnings("restricted")
    static MemorySegment unscoped(MemorySegment memory) {
        return MemorySegment.ofAddress(memory.address()).reinterpret(memory.byteSize());
    }

    /** @return the send-queue depth to ask for, within the device's limits and the CQ's capacity */
    static int sendQueueDepth(Hca hca, int wanted, int nqps) {
        int byCq = Math.max(64, (hca.maxCqe - 4 * SLOTS) / nqps);
        return Math.max(16, Math.min(Math.min(wanted, hca.maxQpWr), byCq));
    }

    /** Moves every queue pair to RTR and RTS, connected pairwise to the peer's. */
    final void connectQueuePairs(int[] remoteQpns, PeerAddress remote) throws NetException {
        if (remoteQpns.length != qps.length) {
            throw NetException.remoteError("peer has " + remoteQpns.length + " queue pairs, expected " + qps.length);
        }
        if (remote.linkLayer() != device.linkLayer()) {
            throw NetException.invalidUsage(device.uniqueName() + " is " + (device.isRoce() ? "RoCE" : "InfiniBand")
                    + " but the peer's port is not: both sides need the same link layer");
        }
        try {
            for (int i = 0; i < qps.length; i++) {
                qps[i].toRtr(device, remoteQpns[i], remote, config.trafficClass(), config.serviceLevel());
                qps[i].toRts(config.timeout(), config.retryCount());
            }
        } catch (VerbsException e) {
            throw new NetException(NetResult.SYSTEM_ERROR, device.uniqueName() + ": cannot connect the queue pairs to "
                    + "the peer: " + e.getMessage() + (device.isRoce() ? " (check the GID: NCCL_IB_GID_INDEX)" : ""),
                    e);
        }
    }

    /** @return this side's port details for the handshake */
    final PeerAddress localAddress() {
        return new PeerAddress(device.linkLayer(), device.activeMtu(), device.lid(), device.gid().raw());
    }

    /** @return the local queue-pair numbers */
    final int[] localQpns() {
        int[] q = new int[qps.length];
        for (int i = 0; i < q.length; i++) {
            q[i] = qps[i].qpn;
        }
        return q;
    }

    /** Keeps the handshake's socket as the side channel, watched for the peer's end. */
    final void attachSideChannel(SocketChannel ch, PeerWatch watch) {
        this.channel = ch;
        this.peerWatch = watch;
        try {
            this.peerName = String.valueOf(ch.getRemoteAddress());
        } catch (IOException e) {
            this.peerName = "peer";
        }
        watch.watch(this);
    }

    /** @return the side channel, for {@link PeerWatch} */
    final SocketChannel sideChannel() {
        return channel;
    }

    /** {@link PeerWatch}: the side channel has something to read (or has ended). Any thread. */
    final void peerSignal() {
        peerSignalled = true;
    }

    /** @return the peer's side-channel address, for messages */
    final String peerName() {
        return peerName;
    }

    /** Registers comm-private memory (FIFO, shadows) outside the shared cache. */
    final MemorySegment registerPrivate(MemorySegment memory, int access) throws NetException {
        try {
            return Verbs.regMr(hca.pd, memory.address(), memory.byteSize(), access);
        } catch (VerbsException e) {
            throw new NetException(NetResult.SYSTEM_ERROR, device.uniqueName() + ": " + e.getMessage(), e);
        }
    }

    // ---- progress ----

    /**
     * Polls the completion queue until it is empty and dispatches every completion. Never throws: an
     * error completion fails the comm.
     */
    final void progress() {
        if (closed) {
            return;
        }
        long wcBase = 0;
        while (true) {
            int n = VerbsOps.pollCq(pollCqFn, cq, WC_BATCH, wc);
            if (n < 0) {
                fail(new NetException(NetResult.SYSTEM_ERROR, device.uniqueName() + ": poll_cq failed (" + n + ")"));
                return;
            }
            for (int i = 0; i < n; i++) {
                long off = wcBase + i * IbvLayouts.Wc.SIZE;
                long wrId = wc.get(JAVA_LONG, off + IbvLayouts.Wc.WR_ID);
                int status = wc.get(JAVA_INT, off + IbvLayouts.Wc.STATUS);
                if (status != Ibv.WC_SUCCESS) {
                    completionError(wrId, status, wc.get(JAVA_INT, off + IbvLayouts.Wc.VENDOR_ERR));
                    continue;
                }
                onCompletion(wrId, wc.get(JAVA_INT, off + IbvLayouts.Wc.OPCODE), wc.get(IMM, off + IbvLayouts.Wc.IMM_DATA),
                        wc.get(JAVA_INT, off + IbvLayouts.Wc.BYTE_LEN));
            }
            if (n < WC_BATCH) {
                return;
            }
        }
    }

    /** One successful completion. */
    abstract void onCompletion(long wrId, int opcode, int imm, int byteLength);

    private void completionError(long wrId, int status, int vendorError) {
        if (status == Ibv.WC_WR_FLUSH_ERR && failure.get() != null) {
            return; // the queue pair is already in error: the first error said why
        }
        String hint = switch (status) {
            case Ibv.WC_RETRY_EXC_ERR -> ": the peer stopped answering (dead process or host, or no route to it; "
                    + "NCCL_IB_TIMEOUT and NCCL_IB_RETRY_CNT set how long the queue pair retries)";
            case Ibv.WC_RNR_RETRY_EXC_ERR -> ": the peer posted no receive in time";
            case Ibv.WC_REM_ACCESS_ERR -> ": the peer refused the access (a stale registration on its side?)";
            default -> "";
        };
        fail(new NetException(NetResult.REMOTE_ERROR, device.uniqueName() + ": work request failed on QP index "
                + WorkId.qpIndex(wrId) + " to " + peerName + ": " + Verbs.wcStatusString(status) + " (status " + status
                + ", vendor error 0x" + Integer.toHexString(vendorError) + ")" + hint));
    }

    // ---- failure and the peer ----

    /**
     * Fails the comm once; later failures are ignored. Thread-safe: the async-event thread calls it.
     * Tells the peer with an ABORT frame unless the failure came from the peer.
     */
    final void fail(NetException cause) {
        if (failure.compareAndSet(null, cause)) {
            if (!closed) {
                logger.warn("NET/JcclIB : %s comm with %s failed: %s", getClass().getSimpleName(), peerName,
                        cause.getMessage());
            }
            if (!peerClosed) {
                sendControl(ConnectionInfo.Control.ABORT, 0);
            }
            onFailure();
        }
    }

    /** Called once when the comm fails, after {@link #failure()} is set. */
    void onFailure() {
    }

    /** @return the comm's failure, or {@code null} while it works */
    final NetException failure() {
        return failure.get();
    }

    /** @throws NetException if the comm failed or was closed: new requests are refused */
    final void ensureUsable() throws NetException {
        NetException f = failure.get();
        if (f != null) {
            throw rethrow(f);
        }
        if (closed) {
            throw NetException.internalError("the comm is closed");
        }
    }

    /** @return a fresh exception for one request, carrying the comm's failure */
    static NetException rethrow(NetException f) {
        return new NetException(f.result(), f.getMessage(), f);
    }

    /**
     * Reads the side channel if {@link PeerWatch} flagged it (otherwise one volatile read). The
     * peer's CLOSE or ABORT, or the end of the stream, first drains the completion queue (so work
     * that completed is not lost) and then fails the comm.
     */
    final void watchPeer() {
        if (!peerSignalled || channel == null || failure.get() != null) {
            return;
        }
        peerSignalled = false;
        int n;
        try {
            n = channel.read(controlIn);
        } catch (IOException e) {
            peerGone("the side channel to " + peerName + " broke (" + e.getMessage() + "): the peer process died");
            return;
        }
        if (n < 0) {
            peerGone("the side channel to " + peerName + " closed without a CLOSE: the peer process exited");
            return;
        }
        if (controlIn.position() < ConnectionInfo.Control.SIZE) {
            peerWatch.watch(this); // a partial frame: wait for the rest
            return;
        }
        controlIn.flip();
        byte type = controlIn.get();
        long value = controlIn.order(ByteOrder.BIG_ENDIAN).getLong();
        controlIn.clear();
        peerClosed = true;
        progress();
        if (type == ConnectionInfo.Control.CLOSE) {
            onPeerClose(value);
            fail(NetException.remoteError("the peer " + peerName + " closed the connection"));
        } else if (type == ConnectionInfo.Control.ABORT) {
            fail(NetException.remoteError("the peer " + peerName + " reported that its side of the connection failed"));
        } else {
            fail(NetException.remoteError("garbage on the side channel from " + peerName + " (type byte " + type
                    + "): dropping the connection"));
        }
    }

    private void peerGone(String why) {
        peerClosed = true;
        progress();
        fail(NetException.remoteError(why));
    }

    /**
     * The peer closed its comm after seeing {@code completed} messages complete: the subclass
     * settles what it can before the comm fails.
     */
    abstract void onPeerClose(long completed);

    /** @return how many messages this side saw complete, in order: sent in the CLOSE frame */
    abstract long completedInOrder();

    private void sendControl(byte type, long value) {
        SocketChannel ch = channel;
        if (ch == null) {
            return;
        }
        synchronized (controlOut) {
            controlOut.clear();
            controlOut.put(type).order(ByteOrder.BIG_ENDIAN).putLong(value).flip();
            try {
                // 9 bytes into an idle socket's buffer: one write normally takes them all
                for (int spins = 0; controlOut.hasRemaining() && spins < 1000; spins++) {
                    ch.write(controlOut);
                }
            } catch (IOException ignored) {
                // the peer is gone already; it will see the end of the stream
            }
        }
    }

    // ---- close ----

    /**
     * Closes the comm: tells the peer (CLOSE with the count of completed messages), destroys the
     * queue pairs and the completion queue, releases the private registrations and the memory.
     * Pending requests fail. Safe with requests in flight and after a failure.
     */
    final void close() throws NetException {
        if (closed) {
            return;
        }
        if (failure.get() == null) {
            sendControl(ConnectionInfo.Control.CLOSE, completedInOrder());
        }
        closed = true;
        failure.compareAndSet(null, NetException.internalError("the comm is closed"));
        String problem = destroyCq(releasePrivate(destroyQueuePairs(null)));
        SocketChannel ch = channel;
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        arena.close();
        if (problem != null) {
            throw NetException.systemError(device.uniqueName() + ": closing the comm: " + problem);
        }
        logger.info(LogSubsystem.NET, "NET/JcclIB : closed %s comm with %s", getClass().getSimpleName(), peerName);
    }

    /**
     * Releases the subclass's own verbs objects (registrations, the flush queue pair), after the
     * connection's queue pairs and before the completion queue.
     *
     * @param problem the first problem so far, or {@code null}
     * @return the first problem, or {@code null}
     */
    abstract String releasePrivate(String problem);

    /** Destroys the connection's queue pairs. @return the first problem, or {@code null} */
    private String destroyQueuePairs(String problem) {
        for (QueuePair qp : qps) {
            if (qp != null) {
                hca.disown(qp.qp);
                try {
                    qp.destroy();
                } catch (VerbsException e) {
                    problem = problem == null ? e.getMessage() : problem;
                }
            }
        }
        return problem;
    }

    /** Destroys the completion queue, once no queue pair uses it. @return the first problem, or {@code null} */
    private String destroyCq(String problem) {
        if (cq != null) {
            hca.disown(cq);
            try {
                Verbs.destroyCq(cq);
            } catch (VerbsException e) {
                problem = problem == null ? e.getMessage() : problem;
            }
        }
        return problem;
    }

    static String releaseMr(MemorySegment mr, String problem) {
        if (mr == null) {
            return problem;
        }
        try {
            Verbs.deregMr(mr);
            return problem;
        } catch (VerbsException e) {
            return problem == null ? e.getMessage() : problem;
        }
    }

    /** @return {@code seq}'s FIFO slot */
    static int slot(long seq) {
        return (int) (seq & (SLOTS - 1));
    }
}
