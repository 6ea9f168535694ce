package io.jccl.net.socket;

import io.jccl.spi.NetException;

import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * An I/O thread: a duty cycle over data streams, backing off (spin, yield, then block) when there
 * is nothing to move. With chunks in hand that the sockets cannot take or give yet, it blocks in a
 * selector over its streams, so the moment the peer's bytes arrive (or the socket drains) wakes it;
 * a timed park there would add up to its period to every message. With nothing queued it parks,
 * and the producer wakes it (unpark, or the selector's wakeup).
 *
 * <p>A worker either belongs to one comm (made with its streams, stopped with it) or is one of the
 * plugin's shared I/O threads ({@code JCCL_SOCKET_SHARED_IO}), which serve the streams of many
 * comms: a comm {@linkplain #attach attaches} its streams when it starts and
 * {@linkplain #detach detaches} them before its memory may go. The stream set is an array replaced
 * whole at those two moments only, so the duty cycle allocates nothing.
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

    private static final DataStream[] NONE = new DataStream[0];

    /** The comm this worker belongs to, or null for a shared worker (each stream names its own). */
    private final SocketComm owner;
    /** The streams served, replaced whole by attach and detach; the duty cycle reads it once a cycle. */
    private volatile DataStream[] streams;
    /** The set the selector's registrations and the low-water choice were last made for (worker's). */
    private DataStream[] registered = NONE;
    /** Duty cycles begun: a detaching comm waits for the next, after which no cycle sees its streams. */
    private volatile long cycles;
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
    private boolean waitsByLowWater;
    private volatile int state = RUNNING;
    /** When the duty cycle last went round: stale while RUNNING means runnable without a core. */
    private volatile long lastCycleNanos = System.nanoTime();
    private volatile boolean stopping;
    /** Times this thread blocked on its sockets' readiness, and parked with nothing queued (its own, read at close). */
    private long selects;
    private long parks;

    /** A worker of one comm, serving {@code streams} (that comm's) until it is stopped. */
    StreamWorker(SocketComm owner, DataStream[] streams, long spinNanos, long helpAfterNanos, String name) {
        this.owner = owner;
        this.streams = streams;
        this.spinNanos = spinNanos;
        this.helpAfterNanos = helpAfterNanos;
        this.thread = new Thread(this, name);
        this.thread.setDaemon(true);
        this.selector = openSelector();
    }

    /** A shared worker: it serves the streams comms attach, until the plugin stops it. */
    static StreamWorker shared(long spinNanos, String name) {
        return new StreamWorker(null, NONE, spinNanos, 0, name);
    }

    private static Selector openSelector() {
        try {
            return Selector.open();
        } catch (IOException | RuntimeException e) {
            // Without a selector the worker parks briefly instead: slower, never wrong.
            return null;
        }
    }

    /**
     * Worker thread, at the start of a cycle whose stream set changed: registers the new streams
     * with the selector (a stream whose registration fails is then polled, never waited on) and
     * decides again whether the set waits for its bytes by low-water mark.
     */
    private void resync(DataStream[] now) {
        boolean lowWater = now.length > 0 && selector != null;
        for (DataStream d : now) {
            lowWater &= d.waitsByLowWater();
            if (selector != null && d.channel.keyFor(selector) == null) {
                try {
                    d.channel.register(selector, d.sending() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
                } catch (IOException | RuntimeException e) {
                    // A closed or broken channel: its comm's next poll reports it.
                    lowWater = false;
                }
            }
        }
        waitsByLowWater = lowWater;
        registered = now;
    }

    /** Shared worker: serves {@code more} (one comm's streams) from its next cycle on. */
    void attach(DataStream[] more) {
        synchronized (this) {
            DataStream[] old = streams;
            DataStream[] now = Arrays.copyOf(old, old.length + more.length);
            System.arraycopy(more, 0, now, old.length, more.length);
            streams = now;
        }
        wake();
    }

    /**
     * Shared worker: stops serving {@code comm}'s streams and, called from another thread, returns
     * once no cycle of this worker can touch them (or the worker has ended): the comm may then
     * free their memory and close their sockets.
     */
    void detach(SocketComm comm) {
        synchronized (this) {
            DataStream[] old = streams;
            int keep = 0;
            for (DataStream d : old) {
                if (d.comm != comm) {
                    keep++;
                }
            }
            if (keep == old.length) {
                return;
            }
            DataStream[] now = new DataStream[keep];
            int k = 0;
            for (DataStream d : old) {
                if (d.comm != comm) {
                    now[k++] = d;
                } else if (selector != null) {
                    SelectionKey key = d.channel.keyFor(selector);
                    if (key != null) {
                        key.cancel();
                    }
                }
            }
            streams = now;
        }
        if (Thread.currentThread() == thread) {
            return;
        }
        // The cycle under way may hold the old set; the next one reads the new (cycles counts up
        // before the set is read).
        long seen = cycles;
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (cycles == seen && thread.isAlive() && System.nanoTime() < deadline) {
            wake();
            LockSupport.parkNanos(10_000);
        }
    }

    /** @return whether this worker serves a stream of {@code comm} now */
    boolean serves(SocketComm comm) {
        for (DataStream d : streams) {
            if (d.comm == comm) {
                return true;
            }
        }
        return false;
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
            boolean helped = helpAfterNanos > 0;
            while (!stopping && (owner == null || owner.failure() == null)) {
                cycles++; // this thread alone writes it
                DataStream[] streams = this.streams;
                if (streams != registered) {
                    resync(streams);
                }
                long moved = 0;
                if (helped) {
                    lastCycleNanos = System.nanoTime();
                    for (DataStream s : streams) {
                        moved += s.tryProgress();
                    }
                } else if (owner != null) {
                    // No caller ever consumes these streams: no flag to take, no cycle clock to keep.
                    for (DataStream s : streams) {
                        moved += s.progress();
                    }
                } else {
                    moved = progressShared(streams);
                }
                if (moved > 0) {
                    idleRounds = 0;
                    if (spinNanos > 0) {
                        lastMoved = System.nanoTime();
                    }
                } else if (waitsByLowWater && anyBusy(streams) && worthSleepingFor(streams)
                        && (spinNanos == 0 || System.nanoTime() - lastMoved >= spinNanos)) {
                    // The state first: a chunk queued after it wakes the selector; one queued before
                    // it is armed for below.
                    state = SELECTING;
                    armLowWater(streams);
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
                    if (anyBusy(streams)) {
                        armLowWater(streams);
                        selects++;
                        selector.select(ignoreKey, SELECT_TIMEOUT_MS);
                    } else {
                        state = PARKED;
                        // The other half of wake()'s fence: our state store before our look at the
                        // rings, on any memory model, so a producer either sees PARKED or we see
                        // its chunk. A missed wake-up would cost a whole idle park.
                        VarHandle.fullFence();
                        if (!anyBusy(streams) && this.streams == streams) {
                            parks++;
                            LockSupport.parkNanos(this, IDLE_PARK_NANOS);
                        }
                    }
                    state = RUNNING;
                } else {
                    state = PARKED;
                    VarHandle.fullFence();
                    boolean busy = anyBusy(streams);
                    if (!busy) {
                        parks++;
                    }
                    LockSupport.parkNanos(this, busy ? 20_000 : IDLE_PARK_NANOS);
                    state = RUNNING;
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!stopping) {
                // A worker of one comm: the comm failed; a shared worker fails the stream's comm in
                // progressShared and goes on, so what arrives here broke the worker itself.
                SocketComm c = owner;
                if (c != null) {
                    c.fail(NetException.remoteError("data stream to " + c.peer + " failed: " + e, e));
                } else {
                    for (DataStream d : streams) {
                        d.comm.fail(NetException.internalError("JcclSocket's shared I/O thread "
                                + thread.getName() + " failed: " + e));
                    }
                }
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

    /**
     * A shared worker's pass over the streams of many comms. A stream whose comm has failed is
     * skipped (its comm detaches it when its caller next looks); one whose socket breaks fails its
     * own comm only and leaves the set, so the other comms' streams go on.
     */
    private long progressShared(DataStream[] streams) {
        long moved = 0;
        for (DataStream s : streams) {
            SocketComm c = s.comm;
            if (c.failure() != null) {
                continue;
            }
            try {
                moved += s.progress();
            } catch (IOException | RuntimeException e) {
                c.fail(NetException.remoteError("data stream to " + c.peer + " failed: " + e, e));
                detach(c);
            }
        }
        return moved;
    }

    /** Sets each receiving stream's low-water mark for its chunk under way (no-op for the others). */
    private static void armLowWater(DataStream[] streams) {
        for (DataStream s : streams) {
            s.armLowWater();
        }
    }

    /** @return whether every stream's chunk under way has enough still to come to sleep for */
    private static boolean worthSleepingFor(DataStream[] streams) {
        for (DataStream s : streams) {
            if (!s.worthSleepingFor()) {
                return false;
            }
        }
        return true;
    }

    private static boolean anyBusy(DataStream[] streams) {
        for (DataStream s : streams) {
            if (s.busy()) {
                return true;
            }
        }
        return false;
    }
}
