package io.jccl.net.socket;

import io.jccl.spi.NetException;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * An I/O thread of one comm: a duty cycle over its data streams, backing off (spin, yield, then
 * block) when there is nothing to move. With chunks in hand that the sockets cannot take or give
 * yet, it blocks in a selector over its streams, so the moment the peer's bytes arrive (or the
 * socket drains) wakes it; a timed park there would add up to its period to every message. With
 * nothing queued it parks, and the producer wakes it (unpark, or the selector's wakeup).
 */
final class StreamWorker implements Runnable {
    private static final int SPINS = 200;
    private static final int YIELDS = 20;
    /**
     * With nothing queued a worker parks until its producer wakes it; the timeout is a safety net
     * only. It was 1 ms: each idle I/O thread then woke 1000 times a second, spun, yielded and
     * parked again, about 2% of a core per thread on an H200 host (async-profiler, 8-byte
     * all_reduce under NCCL, 4 idle I/O threads a rank).
     */
    static final long IDLE_PARK_NANOS = 200_000_000;
    /** A safety net only: readiness or the producer ends a select. */
    private static final long SELECT_TIMEOUT_MS = 1;

    private static final int RUNNING = 0;
    private static final int PARKED = 1;
    private static final int SELECTING = 2;

    private final SocketComm comm;
    private final DataStream[] streams;
    /** Polls at least this long after the last byte moved before backing off (JCCL_SOCKET_SPIN_US). */
    private final long spinNanos;
    /** A polling caller moves this worker's bytes once it is starved this long; 0: never (JCCL_SOCKET_HELP_US). */
    private final long helpAfterNanos;
    private final Thread thread;
    /** Over this worker's streams (read or write readiness); null if none could be opened. */
    private final Selector selector;
    private final Consumer<SelectionKey> ignoreKey = key -> { };
    /**
     * Its streams receive and wait for their bytes with a low-water mark ({@code JCCL_SOCKET_LOW_WATER}):
     * with a chunk under way and nothing to read, it sleeps in its selector at once rather than
     * polling, since every empty read takes the socket's lock from the sender's incoming segments
     * (a loopback reader polling for 512 KiB chunks moved 0.7 to 4.6 GB/s, one sleeping until the
     * chunk was there 1.4 to 5.6, alternating runs on the 2-core build machine).
     */
    private final boolean waitsByLowWater;
    private volatile int state = RUNNING;
    /** When the duty cycle last went round: stale while RUNNING means runnable without a core. */
    private volatile long lastCycleNanos = System.nanoTime();
    private volatile boolean stopping;
    /** Times this thread blocked on its sockets' readiness, and parked with nothing queued (its own, read at close). */
    private long selects;
    private long parks;

    StreamWorker(SocketComm comm, DataStream[] streams, long spinNanos, long helpAfterNanos, String name) {
        this.comm = comm;
        this.streams = streams;
        this.spinNanos = spinNanos;
        this.helpAfterNanos = helpAfterNanos;
        this.thread = new Thread(this, name);
        this.thread.setDaemon(true);
        this.selector = openSelector(streams);
        boolean lowWater = streams.length > 0;
        for (DataStream d : streams) {
            lowWater &= d.waitsByLowWater();
        }
        this.waitsByLowWater = lowWater && selector != null;
    }

    private static Selector openSelector(DataStream[] streams) {
        Selector s = null;
        try {
            s = Selector.open();
            for (DataStream d : streams) {
                d.channel.register(s, d.sending() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
            }
            return s;
        } catch (IOException | RuntimeException e) {
            // Without a selector the worker parks briefly instead: slower, never wrong.
            if (s != null) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // nothing more to release
                }
            }
            return null;
        }
    }

    void start() {
        thread.start();
    }

    boolean isAlive() {
        return thread.isAlive();
    }

    /** @return times this thread blocked on its sockets' readiness (read once it is stopped) */
    long selects() {
        return selects;
    }

    /** @return times this thread parked with nothing queued (read once it is stopped) */
    long parks() {
        return parks;
    }

    /** Producer side: called after queuing chunks. */
    void wake() {
        // The chunk was queued with a release store; without a full fence here that store may still
        // sit in this core's store buffer while we read the state (x86 reorders a store before a
        // later load), so we would see RUNNING while the worker, its state just set, sees no chunk
        // and parks: a lost wakeup that cost a whole idle park (1 ms) per message.
        VarHandle.fullFence();
        int s = state;
        if (s == PARKED) {
            LockSupport.unpark(thread);
        } else if (s == SELECTING) {
            selector.wakeup();
        }
    }

    /** Stops the thread and waits for it, so that no I/O touches memory after the comm is closed. */
    void stop() {
        if (stopping && !thread.isAlive()) {
            return;
        }
        stopping = true;
        LockSupport.unpark(thread);
        if (selector != null) {
            selector.wakeup();
        }
        if (Thread.currentThread() != thread) {
            // An interrupt of the caller must not cut the wait short: its memory is free after this.
            boolean interrupted = false;
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (thread.isAlive() && System.nanoTime() < deadline) {
                try {
                    thread.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void run() {
        int idleRounds = 0;
        long lastMoved = 0;
        try {
            boolean shared = helpAfterNanos > 0;
            while (!stopping && comm.failure() == null) {
                long moved = 0;
                if (shared) {
                    lastCycleNanos = System.nanoTime();
                    for (DataStream s : streams) {
                        moved += s.tryProgress();
                    }
                } else {
                    // No caller ever consumes these streams: no flag to take, no cycle clock to keep.
                    for (DataStream s : streams) {
                        moved += s.progress();
                    }
                }
                if (moved > 0) {
                    idleRounds = 0;
                    if (spinNanos > 0) {
                        lastMoved = System.nanoTime();
                    }
                } else if (waitsByLowWater && anyBusy() && worthSleepingFor()
                        && (spinNanos == 0 || System.nanoTime() - lastMoved >= spinNanos)) {
                    // The state first: a chunk queued after it wakes the selector; one queued before
                    // it is armed for below.
                    state = SELECTING;
                    armLowWater();
                    selects++;
                    selector.select(ignoreKey, SELECT_TIMEOUT_MS);
                    state = RUNNING;
                    idleRounds = 0;
                } else if (++idleRounds <= SPINS || spinNanos > 0 && System.nanoTime() - lastMoved < spinNanos) {
                    Thread.onSpinWait();
                } else if (idleRounds <= SPINS + YIELDS) {
                    Thread.yield();
                } else if (selector != null) {
                    // Set before looking at the rings: a producer that queues after the look sees the
                    // state and wakes us, so no chunk waits out a block.
                    state = SELECTING;
                    if (anyBusy()) {
                        armLowWater();
                        selects++;
                        selector.select(ignoreKey, SELECT_TIMEOUT_MS);
                    } else {
                        state = PARKED;
                        // The other half of wake()'s fence: our state store before our look at the
                        // rings, on any memory model, so a producer either sees PARKED or we see
                        // its chunk. A missed wake-up would cost a whole idle park.
                        VarHandle.fullFence();
                        if (!anyBusy()) {
                            parks++;
                            LockSupport.parkNanos(this, IDLE_PARK_NANOS);
                        }
                    }
                    state = RUNNING;
                } else {
                    state = PARKED;
                    VarHandle.fullFence();
                    boolean busy = anyBusy();
                    if (!busy) {
                        parks++;
                    }
                    LockSupport.parkNanos(this, busy ? 20_000 : IDLE_PARK_NANOS);
                    state = RUNNING;
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!stopping) {
                comm.fail(NetException.remoteError("data stream to " + comm.peer + " failed: " + e, e));
            }
        } finally {
            if (selector != null) {
                try {
                    selector.close();
                } catch (IOException ignored) {
                    // the streams' keys go with it; the channels are closed by the comm
                }
            }
        }
    }

    /**
     * Caller side (the comm's caller, polling): moves this worker's bytes if it is starved, that is
     * running (not blocked on its sockets' readiness, not parked) yet without a turn of its duty
     * cycle for {@code JCCL_SOCKET_HELP_US}: runnable without a core, as when polling threads
     * outnumber the cores, where a message would wait a whole scheduler slice. A worker waiting for
     * the peer's bytes or for room in its sockets is left to wait; so is one that moves bytes: under
     * NCCL the caller is the one proxy thread of every connection, whose time the others need.
     */
    void helpIfStarved() throws IOException {
        if (helpAfterNanos > 0 && state == RUNNING && System.nanoTime() - lastCycleNanos > helpAfterNanos) {
            for (DataStream s : streams) {
                if (s.busy()) {
                    s.tryProgress();
                }
            }
        }
    }

    /** Sets each receiving stream's low-water mark for its chunk under way (no-op for the others). */
    private void armLowWater() {
        for (DataStream s : streams) {
            s.armLowWater();
        }
    }

    /** @return whether every stream's chunk under way has enough still to come to sleep for */
    private boolean worthSleepingFor() {
        for (DataStream s : streams) {
            if (!s.worthSleepingFor()) {
                return false;
            }
        }
        return true;
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
