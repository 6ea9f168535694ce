package io.jccl.core.ll;

import io.jccl.core.JcclException;
import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.transport.Connection;
import io.jccl.core.transport.RecvConnection;
import io.jccl.core.transport.SendConnection;
import io.jccl.spi.DataType;
import io.jccl.spi.NetException;
import io.jccl.spi.NetResult;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * The exchange of ranks that do not all share a host: a connection each way with every other
 * rank (shared memory within a host, the network transport between hosts), used only by the
 * calling thread. A contribution travels as one message: header and data together, so the
 * receiver needs nothing else to use it. Each connection keeps {@code NCCL_STEPS} receives posted
 * ahead (one more as each message is taken), so a sender never waits for its peer to reach the
 * operation before its data can go; and a rank ends an operation only once its sends are complete,
 * so a rank that goes off to compute leaves no message half sent.
 */
final class MeshExchange implements Exchange {
    private final int rank;
    private final int nranks;
    private final SendConnection[] send;
    private final RecvConnection[] recv;
    private final Connection[] all;
    /** This rank's own contribution, laid out as a received one. */
    private final MemorySegment self;
    private long seq;
    private long signature;
    private int from;

    /**
     * @param connections one send and one receive connection per other rank, slots of at least
     *                    {@link #HEADER} plus the largest contribution
     */
    MeshExchange(List<Connection> connections, int rank, int nranks, Arena arena, long maxBytes) {
        this.rank = rank;
        this.nranks = nranks;
        this.send = new SendConnection[nranks];
        this.recv = new RecvConnection[nranks];
        List<Connection> list = new ArrayList<>(connections);
        for (Connection c : list) {
            if (c instanceof SendConnection s) {
                send[c.peer] = s;
            } else {
                recv[c.peer] = (RecvConnection) c;
            }
        }
        this.all = list.toArray(new Connection[0]);
        this.self = arena.allocate(HEADER + maxBytes, 64);
        for (RecvConnection r : recv) {
            if (r != null) {
                r.expect(Connection.STEPS);
            }
        }
    }

    private static boolean includes(int who, int k) {
        return who == EVERYONE || who == k;
    }

    @Override
    public void publish(long seq, long signature, MemorySegment src, long offset, long bytes, long blockBytes, int to,
                        int from, Waiter waiter) {
        this.seq = seq;
        this.signature = signature;
        this.from = from;
        long own = blockBytes > 0 ? blockBytes : bytes;
        if (own > 0) {
            MemorySegment.copy(src, blockBytes > 0 ? offset + rank * blockBytes : offset, self, HEADER, own);
        }
        for (int k = 0; k < nranks; k++) {
            if (k == rank || !includes(to, k)) {
                continue;
            }
            SendConnection s = send[k];
            while (!s.hasRoom()) {
                progress();
                waiter.idle(k, "a free slot to send");
            }
            MemorySegment slot = s.fillSlot();
            long n = blockBytes > 0 ? blockBytes : bytes;
            slot.set(ValueLayout.JAVA_LONG, 0, seq);
            slot.set(ValueLayout.JAVA_LONG, 8, signature);
            MemorySegment.copy(src, blockBytes > 0 ? offset + k * blockBytes : offset, slot, HEADER, n);
            s.publish((int) (HEADER + n));
        }
        // Only the sends: a receive is progressed when its contribution is awaited (over the
        // network each receive's poll is a read syscall, mostly empty right after publishing).
        for (SendConnection s : send) {
            if (s != null) {
                progress(s);
            }
        }
    }

    @Override
    public MemorySegment contribution(int k, Waiter waiter) {
        if (k == rank) {
            return self;
        }
        RecvConnection r = recv[k];
        while (!r.hasData()) {
            progressFor(r);
            waiter.idle(k, "the contribution");
        }
        waiter.progressed();
        MemorySegment slot = r.dataSlot();
        if (slot.get(ValueLayout.JAVA_LONG, 0) != seq) {
            throw new JcclException(NetResult.INTERNAL_ERROR, k, "low-latency exchange: rank " + k + " sent operation #"
                    + slot.get(ValueLayout.JAVA_LONG, 0) + " where #" + seq + " was due");
        }
        Signature.check(signature, slot.get(ValueLayout.JAVA_LONG, 8), k);
        return slot;
    }

    /** @return whether {@link #allReduceByDoubling} runs here: a power-of-two number of ranks */
    boolean doubles() {
        return Integer.bitCount(nranks) == 1;
    }

    /**
     * All-reduce by recursive doubling: in round j each rank swaps its partial result with rank
     * {@code rank ^ 2^j} and both combine the pair, the lower rank's operand first, so every rank
     * ends with the same bits. A rank sends and receives log2(n) messages instead of n - 1: through
     * TCP each is a syscall at both ends, and where ranks share cores (4 ranks on 2 here) those
     * syscalls, not the rounds' latency, set the time (Open MPI's small all-reduce does the same).
     *
     * @param out the result; may be {@code input} (in place)
     */
    void allReduceByDoubling(long seq, long signature, MemorySegment input, MemorySegment out, long count, DataType type,
                             ReduceOp op, ReductionKernel kernel, Waiter waiter) {
        this.seq = seq;
        this.signature = signature;
        this.from = NOBODY;
        long bytes = count * type.size();
        ReduceOp accumulate = op == ReduceOp.AVG ? ReduceOp.SUM : op;
        MemorySegment partial = input;
        for (int bit = 1; bit < nranks; bit <<= 1) {
            int partner = rank ^ bit;
            SendConnection s = send[partner];
            while (!s.hasRoom()) {
                progress();
                waiter.idle(partner, "a free slot to send");
            }
            MemorySegment slot = s.fillSlot();
            slot.set(ValueLayout.JAVA_LONG, 0, seq);
            slot.set(ValueLayout.JAVA_LONG, 8, signature);
            MemorySegment.copy(partial, 0, slot, HEADER, bytes);
            s.publish((int) (HEADER + bytes));
            progress(s);
            MemorySegment theirs = contribution(partner, waiter);
            if (partner < rank) {
                kernel.reduce(type, accumulate, theirs, HEADER, partial, 0, out, 0, count);
            } else {
                kernel.reduce(type, accumulate, partial, 0, theirs, HEADER, out, 0, count);
            }
            recv[partner].consume();
            recv[partner].expect(1);
            partial = out;
        }
        if (nranks == 1) {
            kernel.copy(input, 0, out, 0, bytes);
        }
        if (op == ReduceOp.AVG) {
            kernel.divide(type, out, 0, count, nranks);
        }
        finish(waiter);
    }

    @Override
    public long blockOffset(int reader, long blockBytes) {
        return 0;
    }

    @Override
    public void finish(Waiter waiter) {
        for (int k = 0; k < nranks; k++) {
            if (k != rank && includes(from, k)) {
                contribution(k, waiter);
                recv[k].consume();
                recv[k].expect(1);
            }
        }
        for (SendConnection s : send) {
            while (s != null && !s.drained()) {
                progress();
                waiter.idle(s.peer, "the send to complete");
            }
        }
    }

    /**
     * Progresses the one receive awaited and the sends still going out, not the other receives:
     * over the network each is a read syscall, and on a host with more ranks than cores every
     * idle round's syscalls are time taken from the rank awaited.
     */
    private void progressFor(RecvConnection awaited) {
        progress(awaited);
        for (SendConnection s : send) {
            if (s != null && !s.drained()) {
                progress(s);
            }
        }
    }

    private static void progress(Connection c) {
        try {
            c.progress();
        } catch (NetException e) {
            throw new JcclException(e.result() == NetResult.REMOTE_ERROR ? NetResult.REMOTE_ERROR
                    : NetResult.SYSTEM_ERROR, c.peer, c.name + ": " + e.getMessage(), e);
        }
    }

    private void progress() {
        for (Connection c : all) {
            progress(c);
        }
    }

    @Override
    public String kind() {
        return "mesh";
    }

    @Override
    public void close() {
        for (Connection c : all) {
            c.close();
        }
    }
}
