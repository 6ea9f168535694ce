package io.jccl.core.collective;

import static io.jccl.core.collective.Step.INPUT;
import static io.jccl.core.collective.Step.OUTPUT;
import static io.jccl.core.collective.Step.RECV;
import static io.jccl.core.collective.Step.SEND;

/**
 * NCCL's ring all-gather: each loop moves one chunk of every rank's block once round the ring,
 * {@code n} steps: copy the own chunk to the output and send it; {@code n - 2} times receive a
 * chunk, store it and pass it on; receive the last one.
 */
final class RingAllGather extends RingAlgorithm {
    private final long block;

    /** @param block elements per rank: where rank {@code r}'s block starts in the output is {@code r * block} */
    RingAllGather(int n, int me, long base, long count, long maxChunk, long block) {
        super(n, me, base, count, maxChunk);
        this.block = block;
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
        int owner = (me - j + n) % n;
        int flags = j == 0 ? INPUT | OUTPUT | SEND : j < n - 1 ? RECV | OUTPUT | SEND : RECV | OUTPUT;
        s.set(flags, offset, owner * block + offset, elems);
    }

    @Override
    String name() {
        return "ring all-gather";
    }
}
