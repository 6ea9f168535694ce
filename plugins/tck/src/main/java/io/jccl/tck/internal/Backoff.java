package io.jccl.tck.internal;

import java.util.concurrent.locks.LockSupport;

/**
 * What a polling loop does when a poll made no progress: spin a little, then yield, then park for
 * growing intervals up to 1 ms. The kit polls the transport the way NCCL's proxy does, but on a
 * shared machine it must leave CPU to the transport's own threads and to the peer.
 */
public final class Backoff {
    private static final int SPINS = 20;
    private static final int YIELDS = 20;
    private static final long MIN_PARK_NANOS = 1_000;
    private static final long MAX_PARK_NANOS = 1_000_000;

    private int idle;
    private long parkNanos = MIN_PARK_NANOS;

    /** Starts over after a poll that made progress. */
    public void reset() {
        idle = 0;
        parkNanos = MIN_PARK_NANOS;
    }

    /** Waits a little after a poll that made no progress. */
    public void idle() {
        if (idle < SPINS) {
            idle++;
            Thread.onSpinWait();
        } else if (idle < SPINS + YIELDS) {
            idle++;
            Thread.yield();
        } else {
            LockSupport.parkNanos(parkNanos);
            parkNanos = Math.min(parkNanos * 2, MAX_PARK_NANOS);
        }
    }

    /** Calls {@link #reset} if {@code progress}, else {@link #idle}. */
    public void after(boolean progress) {
        if (progress) {
            reset();
        } else {
            idle();
        }
    }
}
