package io.jccl.core.collective;

import static io.jccl.core.collective.Step.INPUT;
import static io.jccl.core.collective.Step.OUTPUT;
import static io.jccl.core.collective.Step.RECV;
import static io.jccl.core.collective.Step.REDUCE;
import static io.jccl.core.collective.Step.SEND;

/**
 * NCCL's ring reduce: a pipeline that starts at the root's successor, adds each rank's input on
 * its way round, and ends at the root, which writes the result to its output.
 */
final class RingReduce extends RingAlgorithm {
    private final int position;
    private final int postOp;

    RingReduce(int n, int me, int root, long base, long count, long maxChunk, boolean postOp) {
        super(n, me, base, count, maxChunk);
        this.position = (me - root - 1 + 2 * n) % n;
        this.postOp = postOp ? Step.POSTOP : 0;
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
        int flags = position == 0 ? INPUT | SEND
                : position < n - 1 ? RECV | INPUT | REDUCE | SEND
                : RECV | INPUT | REDUCE | OUTPUT | postOp;
        s.set(flags, offset, offset, clamp(offset, base + count, maxChunk));
    }

    @Override
    String name() {
        return "ring reduce";
    }
}
