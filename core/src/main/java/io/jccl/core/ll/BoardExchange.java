package io.jccl.core.ll;

import io.jccl.core.transport.ShmBoard;

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
    private final int rank;
    private final int nranks;
    /** {@code areas[parity][rank]}, sliced once. */
    private final MemorySegment[][] areas;
    private final boolean[] seen;
    private long seq;
    private long signature;
    private MemorySegment[] current;

    BoardExchange(ShmBoard board, int rank, int nranks) {
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
        ShmBoard.FLAG.setRelease(own, 0L, seq);
    }

    @Override
    public MemorySegment contribution(int k, Waiter waiter) {
        MemorySegment area = current[k];
        if (!seen[k]) {
            await(k, area, waiter);
        }
        return area;
    }

    private void await(int k, MemorySegment area, Waiter waiter) {
        while ((long) ShmBoard.FLAG.getAcquire(area, 0L) != seq) {
            waiter.idle(k, "the contribution");
        }
        waiter.progressed();
        Signature.check(signature, area.get(ValueLayout.JAVA_LONG, 8), k);
        seen[k] = true;
    }

    @Override
    public long blockOffset(int reader, long blockBytes) {
        return reader * blockBytes;
    }

    @Override
    public void finish(Waiter waiter) {
        for (int k = 0; k < nranks; k++) {
            if (!seen[k]) {
                await(k, current[k], waiter);
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
