package io.jccl.core.collective;

import static io.jccl.core.collective.Step.INPUT;
import static io.jccl.core.collective.Step.OUTPUT;

/**
 * Every collective on a single rank: the output is the input (divided by 1 for an average), at
 * {@code inputBase} in the input and {@code base} in the output. One step, no network.
 */
final class LocalCopy extends RingAlgorithm {
    private final long inputBase;
    private final int postOp;

    LocalCopy(long inputBase, long base, long count, boolean postOp) {
        super(1, 0, base, count, Math.max(1, count));
        this.inputBase = inputBase;
        this.postOp = postOp ? Step.POSTOP : 0;
    }

    @Override
    long loops() {
        return count == 0 ? 0 : 1;
    }

    @Override
    int stepsPerLoop() {
        return 1;
    }

    @Override
    int recvsPerLoop() {
        return 0;
    }

    @Override
    void step(long loop, int j, Step s) {
        s.set(INPUT | OUTPUT | postOp, inputBase + base, base, count);
    }

    @Override
    String name() {
        return "local copy";
    }
}
