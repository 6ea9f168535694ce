package io.jccl.core.collective;

import static io.jccl.core.collective.Step.INPUT;
import static io.jccl.core.collective.Step.OUTPUT;
import static io.jccl.core.collective.Step.RECV;
import static io.jccl.core.collective.Step.REDUCE;
import static io.jccl.core.collective.Step.SEND;

/**
 * NCCL's ring reduce-scatter: each loop reduces one chunk of every rank's block on its way round
 * the ring, {@code n} steps; the block destined for rank {@code d} starts at {@code d + 1} and is
 * final at {@code d}, which writes it to its output.
 */
final class RingReduceScatter extends RingAlgorithm {
    private final long block;
    private final int postOp;

    /** @param block elements per rank: the block destined for rank {@code d} starts at {@code d * block} in the input */
    RingReduceScatter(int n, int me, long base, long count, long maxChunk, long block, boolean postOp) {
        super(n, me, base, count, maxChunk);
        this.block = block;
        this.postOp = postOp ? Step.POSTOP : 0;
    }

    @Override
    long loops() {
        return ceilDiv(count, maxChunk);
    }

    @Override
    int stepsPerLoop() {
        return n;
    }

    @Override
    int recvsPerLoop() {
        return n - 1;
    }

    @Override
    void step(long loop, int j, Step s) {
        long offset = base + loop * maxChunk;
        long elems = clamp(offset, base + count, maxChunk);
        int dest = (me + n - 1 - j) % n;
        int flags = j == 0 ? INPUT | SEND
                : j < n - 1 ? RECV | INPUT | REDUCE | SEND
                : RECV | INPUT | REDUCE | OUTPUT | postOp;
        s.set(flags, dest * block + offset, offset, elems);
    }

    @Override
    String name() {
        return "ring reduce-scatter";
    }
}
