package io.jccl.core.collective;

/**
 * A ring collective on one channel, as a program of loops of steps. Each loop moves one chunk per
 * ring position; chunks are at most a slot. Ranks sit on the ring in rank order and send to
 * {@code rank + 1}.
 *
 * <p>Subclasses are NCCL's ring algorithms ({@code src/device/all_reduce.h} and friends); all ranks
 * compute the same loops from the same arguments, so their steps match message for message.
 */
public abstract class RingAlgorithm {
    /** Ranks on the ring. */
    final int n;
    /** This rank's position. */
    final int me;
    /** First element of this channel's share. */
    final long base;
    /** Elements in this channel's share. */
    final long count;
    /** Most elements one step moves (a slot). */
    final long maxChunk;

    RingAlgorithm(int n, int me, long base, long count, long maxChunk) {
        this.n = n;
        this.me = me;
        this.base = base;
        this.count = count;
        this.maxChunk = maxChunk;
    }

    /** @return loops this channel runs */
    abstract long loops();

    /** @return steps per loop */
    abstract int stepsPerLoop();

    /** @return messages this rank receives per loop */
    abstract int recvsPerLoop();

    /** Fills {@code s} with step {@code j} of loop {@code loop}. */
    abstract void step(long loop, int j, Step s);

    /** @return e.g. {@code ring all-reduce} */
    abstract String name();

    static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }

    /** @return the elements of a chunk at {@code position}, given its start and where the loop ends */
    static long clamp(long start, long end, long chunk) {
        return Math.max(0, Math.min(chunk, end - start));
    }
}
