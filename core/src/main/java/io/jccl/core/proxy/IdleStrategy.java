package io.jccl.core.proxy;

import io.jccl.core.CommConfig;

import java.util.concurrent.locks.LockSupport;

/**
 * What a duty cycle does after a pass, given how much work the pass did (Agrona's idea): reset on
 * work, wait a little longer each idle pass otherwise.
 */
public interface IdleStrategy {

    /** @param workCount what the last pass did; 0 means idle */
    void idle(int workCount);

    /** Forgets the idle streak. */
    void reset();

    /** @return the strategy named by {@link CommConfig.ProxyIdle} */
    static IdleStrategy of(CommConfig.ProxyIdle kind) {
        return switch (kind) {
            case SPIN -> new IdleStrategy() {
                @Override
                public void idle(int workCount) {
                    Thread.onSpinWait();
                }

                @Override
                public void reset() {
                }
            };
            case YIELD -> new IdleStrategy() {
                @Override
                public void idle(int workCount) {
                    if (workCount == 0) {
                        Thread.yield();
                    }
                }

                @Override
                public void reset() {
                }
            };
            case BACKOFF -> new Backoff(16, 100_000, 1_000, 100_000);
        };
    }

    /**
     * Spins, then yields, then parks for exponentially longer up to a cap. Yielding is what keeps
     * several ranks on a few cores moving: a waiting proxy gives its core to one that has data,
     * and gets it back as soon as that one waits in turn; measured on 2 cores with 4 ranks, it
     * beats both spinning and early parking. Parking (from 1 us up to 100 us, so that a message is
     * still seen soon after it arrives) only starts after a long wait, to stop burning a core for
     * a peer that is far behind.
     */
    final class Backoff implements IdleStrategy {
        private final int maxSpins;
        private final int maxYields;
        private final long minParkNanos;
        private final long maxParkNanos;
        private int spins;
        private int yields;
        private long parkNanos;

        public Backoff(int maxSpins, int maxYields, long minParkNanos, long maxParkNanos) {
            this.maxSpins = maxSpins;
            this.maxYields = maxYields;
            this.minParkNanos = minParkNanos;
            this.maxParkNanos = maxParkNanos;
            reset();
        }

        @Override
        public void idle(int workCount) {
            if (workCount > 0) {
                reset();
            } else if (spins < maxSpins) {
                spins++;
                Thread.onSpinWait();
            } else if (yields < maxYields) {
                yields++;
                Thread.yield();
            } else {
                LockSupport.parkNanos(parkNanos);
                parkNanos = Math.min(parkNanos * 2, maxParkNanos);
            }
        }

        @Override
        public void reset() {
            spins = 0;
            yields = 0;
            parkNanos = minParkNanos;
        }
    }
}
