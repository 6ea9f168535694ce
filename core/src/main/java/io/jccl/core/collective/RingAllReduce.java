package io.jccl.core.collective;

import static io.jccl.core.collective.Step.INPUT;
import static io.jccl.core.collective.Step.OUTPUT;
import static io.jccl.core.collective.Step.RECV;
import static io.jccl.core.collective.Step.REDUCE;
import static io.jccl.core.collective.Step.SEND;

/**
 * NCCL's ring all-reduce: a reduce-scatter then an all-gather around the ring, {@code 2n - 1}
 * steps per loop. A loop covers {@code n} chunks; chunk {@code c} starts at rank {@code c + 1},
 * picks up every rank's contribution on its way round, is final at rank {@code c}, and travels
 * round once more so that every rank gets it.
 *
 * <pre>
 * j = 0            send             chunk me-1
 * j = 1 .. n-2     recvReduceSend   chunk me-1-j
 * j = n-1          recvReduceCopySend chunk me   (final: to output, post-op applied)
 * j = n .. 2n-3    recvCopySend     chunk me-(j-n+1)
 * j = 2n-2         recv             chunk me+1
 * </pre>
 */
final class RingAllReduce extends RingAlgorithm {
    private final int postOp;

    RingAllReduce(int n, int me, long base, long count, long maxChunk, boolean postOp) {
        super(n, me, base, count, maxChunk);
        this.postOp = postOp ? Step.POSTOP : 0;
    }

    @Override
    long loops() {
        return ceilDiv(count, n * maxChunk);
    }

    @Override
    int stepsPerLoop() {
        return 2 * n - 1;
    }

    @Override
    int recvsPerLoop() {
        return 2 * n - 2;
    }

    @Override
    void step(long loop, int j, Step s) {
        long loopBase = base + loop * n * maxChunk;
        long end = base + count;
        long chunk = Math.min(maxChunk, ceilDiv(end - loopBase, n));
        int c;
        int flags;
        if (j == 0) {
            c = (me + n - 1) % n;
            flags = INPUT | SEND;
        } else if (j < n - 1) {
            c = (me + n - 1 - j) % n;
            flags = RECV | INPUT | REDUCE | SEND;
        } else if (j == n - 1) {
            c = me;
            flags = RECV | INPUT | REDUCE | OUTPUT | SEND | postOp;
        } else if (j < 2 * n - 2) {
            c = (me + n - (j - n + 1)) % n;
            flags = RECV | OUTPUT | SEND;
        } else {
            c = (me + 1) % n;
            flags = RECV | OUTPUT;
        }
        long offset = loopBase + c * chunk;
        s.set(flags, offset, offset, clamp(offset, end, chunk));
    }

    @Override
    String name() {
        return "ring all-reduce";
    }
}
