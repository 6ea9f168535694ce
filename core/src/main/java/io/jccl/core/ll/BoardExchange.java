package io.jccl.core.ll;

import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.transport.ShmBoard;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The exchange of ranks that all share a host: each writes its contribution into its own area of
 * the {@link ShmBoard} and sets the area's flag to the operation number (release); readers wait
 * for the flag (acquire) and read the data where it lies, with no copy out.
 *
 * <p>Operations alternate between two sets of areas. Writing operation {@code s} into the areas
 * of {@code s - 2} is safe because every rank, before it ends an operation, waits for every other
 * rank's flag of that operation ({@link #finish}): a rank at {@code s} has seen all flags of
 * {@code s - 1}, which each rank set only after it had read everything of {@code s - 2}.
 */
final class BoardExchange implements Exchange {
    private final ShmBoard board;
    private final int rank;
    private final int nranks;
    /** {@code areas[parity][rank]}, sliced once. */
    private final MemorySegment[][] areas;
    private final boolean[] seen;
    private long seq;
    private long signature;
    private MemorySegment[] current;

    BoardExchange(ShmBoard board, int rank, int nranks) {
        this.board = board;
        this.rank = rank;
        this.nranks = nranks;
        this.areas = new MemorySegment[2][nranks];
        for (int p = 0; p < 2; p++) {
            for (int r = 0; r < nranks; r++) {
                areas[p][r] = board.area(p, r);
            }
        }
        this.seen = new boolean[nranks];
    }

    @Override
    public void publish(long seq, long signature, MemorySegment src, long offset, long bytes, long blockBytes, int to,
                        int from, Waiter waiter) {
        this.seq = seq;
        this.signature = signature;
        this.current = areas[(int) (seq & 1)];
        MemorySegment own = current[rank];
        long posted = to == NOBODY ? 0 : bytes;
        if (posted > 0) {
            MemorySegment.copy(src, offset, own, HEADER, posted);
        }
        own.set(ValueLayout.JAVA_LONG, 8, signature);
        java.util.Arrays.fill(seen, false);
        seen[rank] = true;
        ShmBoard.FLAG.setRelease(own, 0L, 2 * seq);
    }

    @Override
    public MemorySegment contribution(int k, Waiter waiter) {
        MemorySegment area = current[k];
        if (!seen[k]) {
            await(k, waiter);
        }
        return area;
    }

    private void await(int k, Waiter waiter) {
        awaitPhase(k, 2 * seq, waiter);
        seen[k] = true;
    }

    /**
     * All-reduce in blocks: each rank copies its input into its area, reduces its own block of
     * every rank's input (in rank order) into the room after its data, then copies every rank's
     * block into its output. Two waits a call, whatever the number of ranks, and each byte
     * reduced once on the host, where the ring needs 2(n-1) steps.
     */
    void allReduceInBlocks(long seq, long signature, MemorySegment send, MemorySegment recv, long count,
                           DataType type, ReduceOp op, ReductionKernel kernel, Waiter waiter) {
        this.seq = seq;
        this.signature = signature;
        this.current = areas[(int) (seq & 1)];
        int size = type.size();
        long bytes = count * size;
        MemorySegment own = current[rank];
        long per = (count + nranks - 1) / nranks;
        long first = Math.min(count, rank * per);
        long mine = Math.min(count, first + per) - first;
        // Every block but this rank's own: only this rank reads that one, from its input.
        kernel.copy(send, 0, own, HEADER, first * size);
        kernel.copy(send, (first + mine) * size, own, HEADER + (first + mine) * size, bytes - (first + mine) * size);
        own.set(ValueLayout.JAVA_LONG, 8, signature);
        ShmBoard.FLAG.setRelease(own, 0L, 2 * seq);
        long resultAt = board.blockAt();
        ReduceOp accumulate = op == ReduceOp.AVG ? ReduceOp.SUM : op;
        long at = HEADER + first * size;
        long mineAt = first * size;
        // In rank order, (c0 op c1) op c2 ..., as the board's small all-reduce sums.
        kernel.reduce(type, accumulate, rank == 0 ? send : awaitPhase(0, 2 * seq, waiter), rank == 0 ? mineAt : at,
                rank == 1 ? send : awaitPhase(1, 2 * seq, waiter), rank == 1 ? mineAt : at, own, resultAt, mine);
        for (int k = 2; k < nranks; k++) {
            kernel.reduce(type, accumulate, own, resultAt, k == rank ? send : awaitPhase(k, 2 * seq, waiter),
                    k == rank ? mineAt : at, own, resultAt, mine);
        }
        if (op == ReduceOp.AVG) {
            kernel.divide(type, own, resultAt, mine, nranks);
        }
        ShmBoard.FLAG.setRelease(own, 0L, 2 * seq + 1);
        for (int k = 0; k < nranks; k++) {
            long from = Math.min(count, k * per);
            long n = Math.min(count, from + per) - from;
            MemorySegment area = awaitPhase(k, 2 * seq + 1, waiter);
            if (n > 0) {
                kernel.copy(area, resultAt, recv, from * size, n * size);
            }
        }
        java.util.Arrays.fill(seen, true);
    }

    /**
     * Waits until rank {@code k}'s flag reaches {@code value} and checks the call matches. A flag
     * only grows, and not past {@code 2 * seq + 1} while this rank is still in call {@code seq}:
     * the next value in that area needs this rank's flag of the call after.
     */
    private MemorySegment awaitPhase(int k, long value, Waiter waiter) {
        MemorySegment area = current[k];
        if ((long) ShmBoard.FLAG.getAcquire(area, 0L) < value) {
            while ((long) ShmBoard.FLAG.getAcquire(area, 0L) < value) {
                waiter.idle(k, "the contribution");
            }
            waiter.progressed();
        }
        Signature.check(signature, area.get(ValueLayout.JAVA_LONG, 8), k);
        return area;
    }

    @Override
    public long blockOffset(int reader, long blockBytes) {
        return reader * blockBytes;
    }

    @Override
    public void finish(Waiter waiter) {
        for (int k = 0; k < nranks; k++) {
            if (!seen[k]) {
                await(k, waiter);
            }
        }
    }

    @Override
    public String kind() {
        return "board";
    }

    @Override
    public void close() {
        // The mapping belongs to the communicator's arena.
    }
}
