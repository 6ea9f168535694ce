package io.jccl.net.ib;

/**
 * The 64-bit {@code wr_id} of JcclIB's work requests, which its completions carry back:
 *
 * <pre>
 *  63      48 47    40 39      32 31                       0
 * +----------+--------+----------+--------------------------+
 * |   slot   |  kind  | qp index | send-queue sequence      |
 * +----------+--------+----------+--------------------------+
 * </pre>
 *
 * The sequence is the queue pair's count of posted send work requests, so that a signaled
 * completion retires every unsignaled request posted before it (completions of one queue pair
 * arrive in order).
 */
final class WorkId {
    /** The last write of a send slot on one queue pair: the slot's completion event on that QP. */
    static final int DATA = 1;
    /** A signaled write whose only purpose is to retire the unsignaled ones before it. */
    static final int DRAIN = 2;
    /** The receiver's clear-to-send write into the sender's FIFO. */
    static final int CTS = 3;
    /** The loopback RDMA read of {@code iflush}; the slot field holds the flush request's index. */
    static final int FLUSH = 4;
    /** A receive work request, consumed by a WRITE_WITH_IMM; the slot field holds the FIFO slot. */
    static final int RECV = 5;

    private WorkId() {
    }

    static long of(int kind, int slot, int qpIndex, int sequence) {
        return ((long) (slot & 0xffff) << 48) | ((long) (kind & 0xff) << 40) | ((long) (qpIndex & 0xff) << 32)
                | (sequence & 0xffffffffL);
    }

    static int kind(long id) {
        return (int) (id >>> 40) & 0xff;
    }

    static int slot(long id) {
        return (int) (id >>> 48) & 0xffff;
    }

    static int qpIndex(long id) {
        return (int) (id >>> 32) & 0xff;
    }

    static int sequence(long id) {
        return (int) id;
    }
}
