package io.jccl.net.socket;

import io.jccl.spi.NetException;

import java.io.IOException;
import java.util.concurrent.locks.LockSupport;

/**
 * An I/O thread of one comm: a duty cycle over its data streams, backing off (spin, yield, park)
 * when there is nothing to move, woken by the producer when new chunks arrive.
 */
final class StreamWorker implements Runnable {
    private static final int SPINS = 200;
    private static final int YIELDS = 20;
    private static final long MIN_PARK_NANOS = 1_000;
    private static final long MAX_BUSY_PARK_NANOS = 50_000;
    private static final long IDLE_PARK_NANOS = 1_000_000;

    private final SocketComm comm;
    private final DataStream[] streams;
    private final Thread thread;
    private volatile boolean parked;
    private volatile boolean stopping;

    StreamWorker(SocketComm comm, DataStream[] streams, String name) {
        this.comm = comm;
        this.streams = streams;
        this.thread = new Thread(this, name);
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /** Producer side: called after queuing chunks. */
    void wake() {
        if (parked) {
            LockSupport.unpark(thread);
        }
    }

    /** Stops the thread and waits for it, so that no I/O touches memory after the comm is closed. */
    void stop() {
        stopping = true;
        LockSupport.unpark(thread);
        if (Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void run() {
        int idleRounds = 0;
        long park = MIN_PARK_NANOS;
        try {
            while (!stopping && comm.failure() == null) {
                long moved = 0;
                for (DataStream s : streams) {
                    moved += s.progress();
                }
                if (moved > 0) {
                    idleRounds = 0;
                    park = MIN_PARK_NANOS;
                } else if (++idleRounds <= SPINS) {
                    Thread.onSpinWait();
                } else if (idleRounds <= SPINS + YIELDS) {
                    Thread.yield();
                } else {
                    // Set before looking at the rings: a producer that queues after the look sees the
                    // flag and unparks us, so no chunk waits out a long park.
                    parked = true;
                    if (anyBusy()) {
                        LockSupport.parkNanos(this, park);
                        park = Math.min(park * 2, MAX_BUSY_PARK_NANOS);
                    } else {
                        LockSupport.parkNanos(this, IDLE_PARK_NANOS);
                    }
                    parked = false;
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!stopping) {
                comm.fail(NetException.remoteError("data stream to " + comm.peer + " failed: " + e, e));
            }
        }
    }

    private boolean anyBusy() {
        for (DataStream s : streams) {
            if (s.busy()) {
                return true;
            }
        }
        return false;
    }
}
