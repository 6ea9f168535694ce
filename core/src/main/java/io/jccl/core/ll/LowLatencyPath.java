package io.jccl.core.ll;

import io.jccl.core.JcclException;
import io.jccl.core.bootstrap.Bootstrap;
import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.transport.Connection;
import io.jccl.core.transport.ConnectionSetup;
import io.jccl.core.transport.ShmBoard;
import io.jccl.spi.DataType;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Small collectives run on the calling thread in one step: every rank publishes its contribution
 * and reads what it needs of the others' ({@link Exchange}), then reduces or copies into its
 * output, always in rank order, so every rank computes bit-identical results. (Through the
 * connection mesh an all-reduce of a power-of-two number of ranks runs by recursive doubling
 * instead, {@link MeshExchange#allReduceByDoubling}: also the same bits on every rank.) The exchange is set
 * up by the first small call, which every rank makes at the same point. One call at a time per
 * communicator; a second thread calling concurrently is refused.
 */
public final class LowLatencyPath {
    /**
     * What the exchange is built from.
     *
     * @param sameHost    for each rank, whether it is reached through shared memory
     * @param oversubscribed whether this host has more of the communicator's ranks than cores they run on
     * @param tag         bootstrap tag of the exchange's set-up messages
     */
    public record Links(Bootstrap bootstrap, NetPlugin net, int device, Arena arena, Duration timeout, NetLogger log,
                        boolean[] sameHost, boolean oversubscribed, int tag) {
    }

    /** Explains a wait that ran out of time: which rank holds it up, asking the others how far they are. */
    @FunctionalInterface
    public interface Diagnosis {
        JcclException timedOut(long sequence, String operation, int peer, String localReason);
    }

    private final int rank;
    private final int nranks;
    private final long maxBytes;
    /**
     * The largest all-reduce: beyond {@link #maxBytes}, on a board in blocks, or through
     * connections by recursive doubling (a power of two of ranks).
     */
    private final long allReduceMaxBytes;
    private final Links links;
    /** Every rank shares this host: the ranks meet on a board, else through a connection each. */
    private final boolean allLocal;
    private final Waiter waiter;
    private final AtomicBoolean busy = new AtomicBoolean();
    private volatile boolean closed;
    private Exchange exchange;
    /** Small operations so far: the number each contribution carries. */
    private long operations;

    /**
     * @param maxBytes the largest contribution (bytes a rank publishes) this path takes
     * @param allReduceMaxBytes the largest all-reduce: on a board in blocks, or through connections
     *                          by recursive doubling; the caller decides where either applies
     * @param failure  the communicator's failure, checked while waiting
     */
    public LowLatencyPath(int rank, int nranks, long maxBytes, long allReduceMaxBytes, Links links,
                          Supplier<JcclException> failure, Diagnosis diagnosis) {
        this.rank = rank;
        this.nranks = nranks;
        this.maxBytes = maxBytes;
        this.links = links;
        boolean local = true;
        for (boolean b : links.sameHost()) {
            local &= b;
        }
        this.allLocal = local;
        this.allReduceMaxBytes = Math.max(maxBytes, allReduceMaxBytes);
        this.waiter = new Waiter(failure, diagnosis, links.timeout().toNanos(), links.oversubscribed());
    }

    /** @return whether a call that publishes {@code bytes} per rank takes this path */
    public boolean accepts(long bytes) {
        return bytes > 0 && bytes <= maxBytes;
    }

    /** @return whether an all-reduce of {@code bytes} per rank takes this path (on a board, larger ones than {@link #accepts}) */
    public boolean acceptsAllReduce(long bytes) {
        return bytes > 0 && bytes <= allReduceMaxBytes;
    }

    /** @return how the ranks meet, for logs and tables */
    public String describe() {
        return nranks == 1 ? "this rank alone" : allLocal ? "shared-memory board" : "a connection to each rank";
    }

    /** @return how an all-reduce beyond {@link #maxBytes} goes, for logs and tables */
    public String describeLargeAllReduce() {
        return allLocal ? "on the board in blocks" : "by recursive doubling";
    }

    /** @return the largest contribution this path takes */
    public long maxBytes() {
        return maxBytes;
    }

    /** @return the largest all-reduce this path takes: {@link #maxBytes}, or more on a board ({@code JCCL_BOARD_ALLREDUCE}) */
    public long allReduceMaxBytes() {
        return allReduceMaxBytes;
    }

    /** NCCL's all-reduce; {@code sequence} is the communicator's operation number, for diagnoses. */
    public void allReduce(long sequence, MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op,
                          ReductionKernel kernel) {
        Exchange ex = begin("allReduce", sequence);
        try {
            long signature = Signature.of(Signature.ALL_REDUCE, type, op, 0, count);
            if (ex instanceof MeshExchange mesh && mesh.doubles()) {
                mesh.allReduceByDoubling(operations, signature, send, recv, count, type, op, kernel, waiter);
                return;
            }
            long bytes = count * type.size();
            if (bytes > maxBytes && ex instanceof BoardExchange board) {
                board.allReduceInBlocks(operations, signature, send, recv, count, type, op, kernel, waiter);
                return;
            }
            ex.publish(operations, signature, send, 0, bytes, 0, Exchange.EVERYONE, Exchange.EVERYONE, waiter);
            reduceAllAt(ex, 0, type, op, count, recv, kernel);
            ex.finish(waiter);
        } finally {
            busy.set(false);
        }
    }

    /** NCCL's broadcast from {@code root}. */
    public void broadcast(long sequence, MemorySegment send, MemorySegment recv, long count, DataType type, int root,
                          ReductionKernel kernel) {
        Exchange ex = begin("broadcast", sequence);
        try {
            long bytes = count * type.size();
            boolean isRoot = rank == root;
            ex.publish(operations, Signature.of(Signature.BROADCAST, type, null, root, count), send, 0,
                    isRoot ? bytes : 0, 0, isRoot ? Exchange.EVERYONE : Exchange.NOBODY,
                    isRoot ? Exchange.NOBODY : root, waiter);
            // The root too copies from its contribution: the same values, also when in place.
            kernel.copy(ex.contribution(root, waiter), Exchange.HEADER, recv, 0, bytes);
            ex.finish(waiter);
        } finally {
            busy.set(false);
        }
    }

    /** NCCL's reduce to {@code root}. */
    public void reduce(long sequence, MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op,
                       int root, ReductionKernel kernel) {
        Exchange ex = begin("reduce", sequence);
        try {
            long bytes = count * type.size();
            boolean isRoot = rank == root;
            ex.publish(operations, Signature.of(Signature.REDUCE, type, op, root, count), send, 0, bytes, 0, root,
                    isRoot ? Exchange.EVERYONE : Exchange.NOBODY, waiter);
            if (isRoot) {
                reduceAllAt(ex, 0, type, op, count, recv, kernel);
            }
            ex.finish(waiter);
        } finally {
            busy.set(false);
        }
    }

    /** NCCL's all-gather: block {@code r} of {@code recv} is rank r's {@code send}. */
    public void allGather(long sequence, MemorySegment send, MemorySegment recv, long sendCount, DataType type,
                          ReductionKernel kernel) {
        Exchange ex = begin("allGather", sequence);
        try {
            long bytes = sendCount * type.size();
            ex.publish(operations, Signature.of(Signature.ALL_GATHER, type, null, 0, sendCount), send, 0, bytes, 0,
                    Exchange.EVERYONE, Exchange.EVERYONE, waiter);
            for (int k = 0; k < nranks; k++) {
                kernel.copy(ex.contribution(k, waiter), Exchange.HEADER, recv, k * bytes, bytes);
            }
            ex.finish(waiter);
        } finally {
            busy.set(false);
        }
    }

    /** NCCL's reduce-scatter: {@code recv} is block {@code rank} of the reduction of every rank's {@code send}. */
    public void reduceScatter(long sequence, MemorySegment send, MemorySegment recv, long recvCount, DataType type,
                              ReduceOp op, ReductionKernel kernel) {
        Exchange ex = begin("reduceScatter", sequence);
        try {
            long block = recvCount * type.size();
            ex.publish(operations, Signature.of(Signature.REDUCE_SCATTER, type, op, 0, recvCount), send, 0,
                    block * nranks, block, Exchange.EVERYONE, Exchange.EVERYONE, waiter);
            reduceAllAt(ex, ex.blockOffset(rank, block), type, op, recvCount, recv, kernel);
            ex.finish(waiter);
        } finally {
            busy.set(false);
        }
    }

    /** {@code out = c0 op c1 op ... op c(n-1)}, in rank order, from each contribution's data at {@code at}. */
    private void reduceAllAt(Exchange ex, long at, DataType type, ReduceOp op, long count, MemorySegment out,
                             ReductionKernel kernel) {
        long from = Exchange.HEADER + at;
        MemorySegment first = ex.contribution(0, waiter);
        if (nranks == 1) {
            kernel.copy(first, from, out, 0, count * type.size());
            return;
        }
        ReduceOp accumulate = op == ReduceOp.AVG ? ReduceOp.SUM : op;
        kernel.reduce(type, accumulate, first, from, ex.contribution(1, waiter), from, out, 0, count);
        for (int k = 2; k < nranks; k++) {
            kernel.reduce(type, accumulate, out, 0, ex.contribution(k, waiter), from, out, 0, count);
        }
        if (op == ReduceOp.AVG) {
            kernel.divide(type, out, 0, count, nranks);
        }
    }

    /** Takes the path for one call: the exchange (set up by the first call), the waiter, the operation number. */
    private Exchange begin(String name, long sequence) {
        if (!busy.compareAndSet(false, true)) {
            throw JcclException.invalidUsage(name + ": another thread is in a call on this communicator; a "
                    + "communicator takes one call at a time (NCCL's rule too)");
        }
        try {
            if (closed) {
                throw JcclException.invalidUsage(name + ": the communicator is closed");
            }
            Exchange ex = exchange;
            if (ex == null) {
                ex = connect();
                exchange = ex;
            }
            operations++;
            waiter.begin(name, sequence);
            return ex;
        } catch (RuntimeException | Error e) {
            busy.set(false);
            throw e;
        }
    }

    private Exchange connect() {
        if (nranks > 1 && allLocal) {
            ShmBoard board = ShmBoard.establish(links.bootstrap(), nranks, allReduceMaxBytes,
                    allReduceMaxBytes > maxBytes ? (allReduceMaxBytes + nranks - 1) / nranks : 0, links.tag(),
                    links.arena());
            links.log().info(LogSubsystem.INIT, "rank %d: small collectives (up to %d B, all-reduce up to %d B) "
                    + "through a shared-memory board", rank, maxBytes, allReduceMaxBytes);
            return new BoardExchange(board, rank, nranks);
        }
        List<ConnectionSetup.Request> requests = new ArrayList<>();
        int slot = (int) ((Exchange.HEADER + allReduceMaxBytes + 63) & ~63L);
        for (int k = 0; k < nranks; k++) {
            if (k != rank) {
                requests.add(new ConnectionSetup.Request(k, false, links.device(), slot, links.tag(),
                        "small-collective recv from rank " + k, links.sameHost()[k]));
                requests.add(new ConnectionSetup.Request(k, true, links.device(), slot, links.tag(),
                        "small-collective send to rank " + k, links.sameHost()[k]));
            }
        }
        List<Connection> made = requests.isEmpty() ? List.of()
                : ConnectionSetup.establish(requests, links.net(), links.bootstrap(), links.arena(), links.timeout(),
                links.log());
        if (nranks > 1) {
            links.log().info(LogSubsystem.INIT, "rank %d: small collectives (up to %d B, all-reduce up to %d B) through "
                    + "a connection to each rank", rank, maxBytes, allReduceMaxBytes);
        }
        return new MeshExchange(made, rank, nranks, links.arena(), allReduceMaxBytes);
    }

    /**
     * Refuses later calls and releases the exchange once no call is inside (waiting at most
     * {@code waitNanos}: a call inside sees the communicator's failure within an idle round).
     *
     * @return whether it was released
     */
    public boolean close(long waitNanos) {
        closed = true;
        long deadline = System.nanoTime() + waitNanos;
        while (busy.get()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            try {
                TimeUnit.MILLISECONDS.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        Exchange ex = exchange;
        if (ex != null) {
            ex.close();
        }
        return true;
    }
}
