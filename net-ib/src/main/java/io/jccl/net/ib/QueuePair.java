package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;
import io.jccl.net.ib.verbs.IbvLayouts;
import io.jccl.net.ib.verbs.Verbs;
import io.jccl.net.ib.verbs.VerbsException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * One reliable-connected queue pair and the book-keeping of its send queue.
 *
 * <p>State changes follow NCCL (spec 8.2): RESET &rarr; INIT (port, P_Key index, remote access)
 * &rarr; RTR (path MTU, the peer's QP number, PSN 0, for RoCE a global route to the peer's GID)
 * &rarr; RTS (PSN 0, {@code NCCL_IB_TIMEOUT}, {@code NCCL_IB_RETRY_CNT}, RNR retry 7).
 *
 * <p>Send-queue accounting: most work requests are unsignaled, so their slots are only known free
 * when a later signaled request completes. {@link #nextId} numbers every request and asks for a
 * signal at least every half queue, and {@link #retire} frees everything up to a completed one.
 */
final class QueuePair {
    final int index;
    final MemorySegment qp;
    final int qpn;
    final int depth;

    private int posted;
    private int retired;
    private int unsignaled;

    private QueuePair(int index, MemorySegment qp, int depth) {
        this.index = index;
        this.qp = qp;
        this.qpn = qp.get(JAVA_INT, IbvLayouts.Qp.QP_NUM);
        this.depth = depth;
    }

    /**
     * Creates an RC queue pair on {@code cq} (send and receive completions both go there).
     *
     * @throws VerbsException if the provider refuses
     */
    static QueuePair create(Hca hca, MemorySegment cq, int index, int maxSendWr, int maxRecvWr) throws VerbsException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment init = arena.allocate(IbvLayouts.QpInitAttr.LAYOUT);
            init.set(ADDRESS, IbvLayouts.QpInitAttr.SEND_CQ, cq);
            init.set(ADDRESS, IbvLayouts.QpInitAttr.RECV_CQ, cq);
            init.set(JAVA_INT, IbvLayouts.QpInitAttr.CAP_MAX_SEND_WR, maxSendWr);
            init.set(JAVA_INT, IbvLayouts.QpInitAttr.CAP_MAX_RECV_WR, maxRecvWr);
            init.set(JAVA_INT, IbvLayouts.QpInitAttr.CAP_MAX_SEND_SGE, 1);
            init.set(JAVA_INT, IbvLayouts.QpInitAttr.CAP_MAX_RECV_SGE, 1);
            init.set(JAVA_INT, IbvLayouts.QpInitAttr.CAP_MAX_INLINE_DATA, 0);
            init.set(JAVA_INT, IbvLayouts.QpInitAttr.QP_TYPE, Ibv.QPT_RC);
            MemorySegment qp = Verbs.createQp(hca.pd, init);
            // the provider may round the depth up; the requested one is what we account with
            return new QueuePair(index, qp, maxSendWr);
        }
    }

    /** RESET &rarr; INIT. */
    void toInit(int port, int pkeyIndex, int access) throws VerbsException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(IbvLayouts.QpAttr.LAYOUT);
            a.set(JAVA_INT, IbvLayouts.QpAttr.QP_STATE, Ibv.QPS_INIT);
            a.set(JAVA_SHORT, IbvLayouts.QpAttr.PKEY_INDEX, (short) pkeyIndex);
            a.set(JAVA_BYTE, IbvLayouts.QpAttr.PORT_NUM, (byte) port);
            a.set(JAVA_INT, IbvLayouts.QpAttr.QP_ACCESS_FLAGS, access);
            Verbs.modifyQp(qp, a, Ibv.QP_STATE | Ibv.QP_PKEY_INDEX | Ibv.QP_PORT | Ibv.QP_ACCESS_FLAGS, "to INIT");
        }
    }

    /**
     * INIT &rarr; RTR, connected to the peer's queue pair.
     *
     * @param local  this side's device
     * @param remote the peer's queue-pair number, LID, GID and MTU
     */
    void toRtr(IbDevice local, int remoteQpn, PeerAddress remote, int trafficClass, int serviceLevel)
            throws VerbsException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(IbvLayouts.QpAttr.LAYOUT);
            a.set(JAVA_INT, IbvLayouts.QpAttr.QP_STATE, Ibv.QPS_RTR);
            a.set(JAVA_INT, IbvLayouts.QpAttr.PATH_MTU, Math.min(local.activeMtu(), remote.mtu()));
            a.set(JAVA_INT, IbvLayouts.QpAttr.DEST_QP_NUM, remoteQpn);
            a.set(JAVA_INT, IbvLayouts.QpAttr.RQ_PSN, 0);
            a.set(JAVA_BYTE, IbvLayouts.QpAttr.MAX_DEST_RD_ATOMIC, (byte) 1);
            a.set(JAVA_BYTE, IbvLayouts.QpAttr.MIN_RNR_TIMER, (byte) 12);
            if (local.isRoce()) {
                a.set(JAVA_BYTE, IbvLayouts.QpAttr.AH_IS_GLOBAL, (byte) 1);
                MemorySegment.copy(remote.gid(), 0, a, JAVA_BYTE, IbvLayouts.QpAttr.AH_DGID, 16);
                a.set(JAVA_INT, IbvLayouts.QpAttr.AH_FLOW_LABEL, 0);
                a.set(JAVA_BYTE, IbvLayouts.QpAttr.AH_SGID_INDEX, (byte) local.gid().index());
                a.set(JAVA_BYTE, IbvLayouts.QpAttr.AH_HOP_LIMIT, (byte) 255);
                a.set(JAVA_BYTE, IbvLayouts.QpAttr.AH_TRAFFIC_CLASS, (byte) trafficClass);
            } else {
                a.set(JAVA_BYTE, IbvLayouts.QpAttr.AH_IS_GLOBAL, (byte) 0);
                a.set(JAVA_SHORT, IbvLayouts.QpAttr.AH_DLID, (short) remote.lid());
            }
            a.set(JAVA_BYTE, IbvLayouts.QpAttr.AH_SL, (byte) serviceLevel);
            a.set(JAVA_BYTE, IbvLayouts.QpAttr.AH_SRC_PATH_BITS, (byte) 0);
            a.set(JAVA_BYTE, IbvLayouts.QpAttr.AH_PORT_NUM, (byte) local.port());
            Verbs.modifyQp(qp, a, Ibv.QP_STATE | Ibv.QP_AV | Ibv.QP_PATH_MTU | Ibv.QP_DEST_QPN | Ibv.QP_RQ_PSN
                    | Ibv.QP_MAX_DEST_RD_ATOMIC | Ibv.QP_MIN_RNR_TIMER, "to RTR, peer QP " + remoteQpn);
        }
    }

    /** RTR &rarr; RTS. */
    void toRts(int timeout, int retryCount) throws VerbsException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(IbvLayouts.QpAttr.LAYOUT);
            a.set(JAVA_INT, IbvLayouts.QpAttr.QP_STATE, Ibv.QPS_RTS);
            a.set(JAVA_BYTE, IbvLayouts.QpAttr.TIMEOUT, (byte) timeout);
            a.set(JAVA_BYTE, IbvLayouts.QpAttr.RETRY_CNT, (byte) retryCount);
            a.set(JAVA_BYTE, IbvLayouts.QpAttr.RNR_RETRY, (byte) 7);
            a.set(JAVA_INT, IbvLayouts.QpAttr.SQ_PSN, 0);
            a.set(JAVA_BYTE, IbvLayouts.QpAttr.MAX_RD_ATOMIC, (byte) 1);
            Verbs.modifyQp(qp, a, Ibv.QP_STATE | Ibv.QP_TIMEOUT | Ibv.QP_RETRY_CNT | Ibv.QP_RNR_RETRY | Ibv.QP_SQ_PSN
                    | Ibv.QP_MAX_QP_RD_ATOMIC, "to RTS");
        }
    }

    /** Any state &rarr; ERR: outstanding work completes with a flush error, new work is refused. */
    void toError() throws VerbsException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(IbvLayouts.QpAttr.LAYOUT);
            a.set(JAVA_INT, IbvLayouts.QpAttr.QP_STATE, Ibv.QPS_ERR);
            Verbs.modifyQp(qp, a, Ibv.QP_STATE, "to ERR");
        }
    }

    void destroy() throws VerbsException {
        Verbs.destroyQp(qp);
    }

    // ---- send-queue accounting (progress thread only) ----

    /** @return send work requests that can be posted now */
    int freeSendSlots() {
        return depth - (posted - retired);
    }

    /** @return whether the next request must be signaled so that the queue keeps draining */
    boolean signalDue() {
        return unsignaled + 1 >= depth / 2;
    }

    /**
     * Numbers the next send work request.
     *
     * @return its {@code wr_id}
     */
    long nextId(int kind, int slot, boolean signaled) {
        posted++;
        unsignaled = signaled ? 0 : unsignaled + 1;
        return WorkId.of(kind, slot, index, posted);
    }

    /** A signaled request numbered {@code sequence} completed: it and all before it are done. */
    void retire(int sequence) {
        retired = sequence;
    }

    @Override
    public String toString() {
        return "QP " + qpn;
    }
}
