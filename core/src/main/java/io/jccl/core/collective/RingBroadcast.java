package io.jccl.core.collective;

import static io.jccl.core.collective.Step.INPUT;
import static io.jccl.core.collective.Step.OUTPUT;
import static io.jccl.core.collective.Step.RECV;
import static io.jccl.core.collective.Step.SEND;

/**
 * NCCL's ring broadcast: a pipeline from the root round the ring, one step per chunk. The root
 * sends (and copies to its output when out-of-place); the others receive, store, and pass on,
 * except the root's predecessor, which ends the chain.
 */
final class RingBroadcast extends RingAlgorithm {
    private final int position;
    private final boolean rootCopies;

    /** @param rootCopies whether the root also copies its input to its output (out-of-place) */
    RingBroadcast(int n, int me, int root, long base, long count, long maxChunk, boolean rootCopies) {
        super(n, me, base, count, maxChunk);
        this.position = (me - root + n) % n;
        this.rootCopies = rootCopies;
    }

    @Override
    long loops() {
        return ceilDiv(count, maxChunk);
    }

    @Override
    int stepsPerLoop() {
        return 1;
    }

    @Override
    int recvsPerLoop() {
        return position == 0 ? 0 : 1;
    }

    @Override
    void step(long loop, int j, Step s) {
        long offset = base + loop * maxChunk;
        int flags = position == 0 ? INPUT | SEND | (rootCopies ? OUTPUT : 0)
                : position < n - 1 ? RECV | OUTPUT | SEND
                : RECV | OUTPUT;
        s.set(flags, offset, offset, clamp(offset, base + count, maxChunk));
    }

    @Override
    String name() {
        return "ring broadcast";
    }
}
