package io.jccl.net.socket;

import io.jccl.cuda.CudaDevice;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetException;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.SocketChannel;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * What a send comm and a receive comm share: the control stream, the data streams and their I/O
 * threads, registrations, and failure. A comm fails once, for good: the first failure is kept and
 * every pending and later call reports it.
 *
 * <p>Caller-thread state is touched only by the thread that calls the comm's methods (NCCL uses a
 * comm from one thread at a time); the data streams are shared with the I/O threads through
 * single-producer single-consumer rings, whose consumer is the I/O thread or, while it polls,
 * the caller ({@link DataStream#tryProgress()}).
 */
abstract sealed class SocketComm permits SocketSendComm, SocketRecvComm {
    private static final VarHandle FAILURE;

    static {
        try {
            FAILURE = MethodHandles.lookup().findVarHandle(SocketComm.class, "failure", NetException.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SocketNetPlugin plugin;
    /** The peer's address, for error messages. */
    final String peer;
    final SocketChannel control;
    /** The liveness socket: heartbeats both ways, read and written only by the plugin's {@link LivenessWatch}. */
    final SocketChannel liveness;
    private final LivenessWatch watch;
    final ControlOut out;
    final ControlIn in;
    final DataStream[] streams;
    private final StreamWorker[] workers;
    /** This comm counts in the plugin's {@link IoThreadBudget}. */
    private final boolean reservedThreads;
    /** Copies between device memory and its host mirrors; made at the first device registration. */
    DeviceStaging staging;
    final int inlineBytes;
    final int minChunkBytes;
    final long timeoutNanos;
    private volatile NetException failure;
    /**
     * The control stream's {@link ControlOut#progressMark} as the stall watchdog last saw it, and
     * when it saw it change: the bound counts from there.
     */
    private long outMark = -1;
    private long outMarkNanos;
    /** A long wait was reported ({@link #stillPending}): once per comm. */
    private boolean longWaitReported;
    private volatile boolean closed;
    /** When the peer's last heartbeat arrived (the comm's creation before the first); written by the watch. */
    private volatile long lastHeardNanos = System.nanoTime();
    /** Why the liveness socket ended, or null while it works; written by the watch. */
    private volatile String livenessEnd;
    /** Polls answered by {@link #pollStreams} without a syscall, for the close line. Caller thread. */
    long quietPolls;
    /** Round-robin position of the next chunk, the same on both ends of the connection. */
    private int nextStream;
    /** Times of requests and chunks for {@code JCCL_SOCKET_TRACE}; null (the default) when off. */
    final CommTrace trace;

    SocketComm(SocketNetPlugin plugin, SocketConfig.Settings settings, SocketChannel control, SocketChannel[] data,
               SocketChannel liveness, int threads, boolean sending, String peer) throws NetException {
        this.plugin = plugin;
        this.peer = peer;
        this.control = control;
        this.liveness = liveness;
        this.watch = plugin.livenessWatch();
        NativeSocketIo direct = settings.nativeIo() ? NativeSocketIo.of(control) : null;
        this.out = new ControlOut(control, direct);
        this.in = new ControlIn(control, direct);
        this.inlineBytes = settings.inlineBytes(data.length);
        this.minChunkBytes = settings.minChunkBytes();
        this.timeoutNanos = settings.timeout().toNanos();
        this.streams = new DataStream[data.length];
        this.trace = CommTrace.forComm(sending, control, data.length);
        for (int s = 0; s < data.length; s++) {
            streams[s] = new DataStream(s + 1, data[s], sending, settings.lowWater() && settings.nativeIo(),
                    trace == null ? null : trace.stream(s));
        }
        int t = data.length == 0 ? 0 : plugin.ioThreads().reserve(Math.max(1, Math.min(threads, data.length)));
        this.reservedThreads = t > 0;
        this.workers = new StreamWorker[t];
        for (int w = 0; w < t; w++) {
            int count = 0;
            for (int s = w; s < data.length; s += t) {
                count++;
            }
            DataStream[] mine = new DataStream[count];
            for (int s = w, k = 0; s < data.length; s += t) {
                mine[k++] = streams[s];
            }
            workers[w] = new StreamWorker(this, mine, settings.spinNanos(), settings.helpAfterNanos(),
                    "jccl-socket-" + (sending ? "send" : "recv") + "-" + peer + "-" + w);
        }
    }

    /**
     * Starts the I/O threads and the heartbeats; called once the comm is fully built, so they never
     * see it half made.
     */
    final void start() {
        for (StreamWorker w : workers) {
            w.start();
        }
        watch.watch(this);
    }

    /** A heartbeat (or several) arrived. Liveness thread. */
    final void heard(long nanos) {
        lastHeardNanos = nanos;
    }

    /**
     * The liveness socket closed or broke. The comm does not fail here: a peer that closed its comm
     * after its last send may still have bytes on the way over the other sockets, and the control
     * stream reports a real loss by itself; what is left is the silence, judged as for any peer.
     * Liveness thread.
     */
    final void livenessEnded(String why) {
        if (livenessEnd == null) {
            livenessEnd = why;
        }
    }

    /** @return the first failure of this comm, or null */
    final NetException failure() {
        return failure;
    }

    /** Records the comm's failure (the first one wins) and logs it once. Any thread. */
    final void fail(NetException cause) {
        if (FAILURE.compareAndSet(this, null, cause) && !closed) {
            plugin.logger().warn("NET/JcclSocket: connection %s %s failed: %s", sending() ? "to" : "from", peer,
                    cause.getMessage());
        }
    }

    /**
     * @throws NetException the comm's failure, or an internal error if it was closed. Before a failure
     *         reaches the caller, the comm's I/O threads are stopped: a request reported failed hands
     *         its memory back (the caller may free it at once), so no thread may still be reading or
     *         writing it.
     */
    final void checkUsable() throws NetException {
        NetException f = failure;
        if (f != null) {
            for (StreamWorker w : workers) {
                w.stop();
            }
            throw f;
        }
        if (closed) {
            throw NetException.internalError("JcclSocket comm " + peer + " is closed");
        }
    }

    abstract boolean sending();

    /** Parses what arrived on the control stream. */
    abstract void readInbound() throws IOException, NetException;

    /** @return whether the comm is waiting for payload bytes that the peer has committed to send */
    abstract boolean inboundInFlight();

    /** @return when inbound payload last arrived */
    abstract long lastInboundNanos();

    /**
     * Moves what can move without blocking on the control stream, and enforces the failure bound:
     * a peer that takes no committed bytes, or sends none of a committed message, for longer than
     * the timeout fails the comm.
     *
     * @throws NetException the comm's failure
     */
    final void progress() throws NetException {
        checkUsable();
        try {
            if (out.busy()) {
                out.flush();
            }
            in.newPass();
            readInbound();
            for (StreamWorker w : workers) {
                w.helpIfStarved();
            }
        } catch (IOException e) {
            failLost(e);
        } catch (NetException e) {
            fail(e);
        }
        watchStalls();
        checkUsable();
    }

    /**
     * A poll of a request whose remaining bytes are all with the I/O threads: the caller's thread
     * has nothing to read or write for it, so it makes no syscall (each a microsecond or more, on
     * the one proxy thread that NCCL polls every connection from); the comm's failure, the stall
     * bound and a starved I/O thread are still looked at. Callers use {@link #progress} instead
     * whenever the control stream has bytes queued to write.
     *
     * @throws NetException the comm's failure
     */
    final void pollStreams() throws NetException {
        checkUsable();
        quietPolls++;
        try {
            for (StreamWorker w : workers) {
                w.helpIfStarved();
            }
        } catch (IOException e) {
            failLost(e);
        }
        watchStalls();
        checkUsable();
    }

    /** Fails the comm for a broken connection, naming the peer. */
    private void failLost(IOException e) {
        fail(NetException.remoteError((sending() ? "connection to " : "connection from ") + peer + " lost: "
                + e.getMessage(), e));
    }

    /** @return whether this comm moves payload over I/O threads of its own (not the caller's thread) */
    final boolean hasIoThreads() {
        return workers.length > 0;
    }

    private void watchStalls() {
        long silent = watch.lastPassNanos() - lastHeardNanos;
        if (silent > timeoutNanos) {
            String end = livenessEnd;
            fail(NetException.remoteError("peer " + peer + " sent no heartbeat for "
                    + TimeUnit.NANOSECONDS.toMillis(silent) + " ms"
                    + (end == null ? "" : " (its liveness connection " + end + ")")
                    + ": it is frozen, dead or unreachable (JCCL_SOCKET_TIMEOUT_MS="
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + ")"));
            return;
        }
        boolean inbound = inboundInFlight();
        if (!out.busy() && !inbound && !anyStreamBusy()) {
            // Nothing committed can be stalled: no clock read (a poll of an idle comm is the
            // common case on NCCL's proxy thread, which polls every connection).
            return;
        }
        long now = System.nanoTime();
        long floor = stallClockFloor(now);
        if (out.busy()) {
            long mark = out.progressMark();
            if (mark != outMark) {
                outMark = mark;
                outMarkNanos = now;
            } else if (now - Math.max(outMarkNanos, floor) > timeoutNanos) {
                fail(stalled("accepted no data"));
                return;
            }
        }
        if (inbound && now - lastInboundNanos() > timeoutNanos) {
            fail(stalled("sent none of a message it started"));
            return;
        }
        for (DataStream s : streams) {
            if (s.busy() && now - Math.max(s.lastMovedNanos(), floor) > timeoutNanos) {
                fail(stalled(sending() ? "accepted no data on stream " + s.viewIndex
                        : "sent none of a message it started on stream " + s.viewIndex));
                return;
            }
        }
    }

    private boolean anyStreamBusy() {
        for (DataStream s : streams) {
            if (s.busy()) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the earliest time the stall watchdog may count outbound bytes as stuck from: a sender
     *         whose messages went ahead of the receives they are for waits for the receiver to post
     *         them, which an idle receiver (computing) may do long after the bound; its heartbeats
     *         still show that it lives. {@link Long#MIN_VALUE} where nothing is exempt.
     */
    long stallClockFloor(long now) {
        return Long.MIN_VALUE;
    }

    private NetException stalled(String what) {
        return NetException.remoteError("peer " + peer + " " + what + " for "
                + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms: it is dead or stuck (JCCL_SOCKET_TIMEOUT_MS)");
    }

    /** Deals a message's payload over the data streams in chunks, the same way on both ends. */
    final void stripe(MemoryRegion region, long offset, long size, SocketRequest owner) {
        long chunk = chunkBytes(size);
        for (long done = 0; done < size; done += chunk) {
            DataStream s = streams[nextStream];
            nextStream = (nextStream + 1) % streams.length;
            s.offer(region, offset + done, (int) Math.min(chunk, size - done), owner);
        }
        for (StreamWorker w : workers) {
            w.wake();
        }
    }

    /** @return whether every stream can take the chunks of a {@code size}-byte message now */
    final boolean streamsHaveRoom(long size) {
        long chunks = (size + chunkBytes(size) - 1) / chunkBytes(size);
        long perStream = (chunks + streams.length - 1) / streams.length;
        for (DataStream s : streams) {
            if (s.free() < perStream) {
                return false;
            }
        }
        return true;
    }

    private long chunkBytes(long size) {
        return Math.max(minChunkBytes, (size + streams.length - 1) / streams.length);
    }

    final MemoryRegion register(MemorySegment data) throws NetException {
        checkUsable();
        return new MemoryRegion(this, data, streams.length + 1);
    }

    /** Device memory: a pinned host mirror, and the comm's copy stream at its first such registration. */
    final MemoryRegion registerDevice(MemorySegment data) throws NetException {
        checkUsable();
        CudaDevice gpu = DeviceStaging.gpuOf(data);
        if (staging == null) {
            staging = DeviceStaging.create(gpu, requestSlots());
        } else if (staging.gpu() != gpu) {
            throw NetException.invalidUsage("JcclSocket comm " + peer + " has device memory of " + staging.gpu()
                    + " registered; a comm takes one GPU's memory, not also " + gpu + "'s");
        }
        return new MemoryRegion(this, DeviceStaging.mirror(gpu, data.byteSize()), data.address(), streams.length + 1);
    }

    /**
     * @return how the data streams' chunks went, for the close line: how long a chunk waited for
     *         its I/O thread once it could move (its stream idle), and how long it then took to move
     */
    final String streamTiming() {
        long chunks = 0;
        long waited = 0;
        long moving = 0;
        long calls = 0;
        long empty = 0;
        for (DataStream s : streams) {
            chunks += s.chunksMoved();
            waited += s.waitedNanos();
            moving += s.movingNanos();
            calls += s.socketCalls();
            empty += s.emptyCalls();
        }
        if (chunks == 0) {
            return "no chunk on the data streams";
        }
        long selects = 0;
        for (StreamWorker w : workers) {
            selects += w.selects();
        }
        long parks = idleParks();
        // Calls and blocks per chunk say how a chunk moved: in one call into buffered room (1.0), or
        // in turns with the peer's thread, each empty call a wait for it (a wake-up each).
        return String.format(Locale.ROOT, "%d chunks on the data streams: each waited %.1f us for its I/O thread, "
                + "then moved in %.1f us (means), in %.2f socket calls (%.2f moved nothing); the I/O threads blocked "
                + "on readiness %.2f and parked %.2f times a chunk", chunks, waited / 1e3 / chunks,
                moving / 1e3 / chunks, (double) calls / chunks, (double) empty / chunks, (double) selects / chunks,
                (double) parks / chunks);
    }

    /** @return times the comm's I/O threads parked with nothing queued (exact once it is closed) */
    final long idleParks() {
        long parks = 0;
        for (StreamWorker w : workers) {
            parks += w.parks();
        }
        return parks;
    }

    /**
     * @return what the comm did, for the INFO line at close: how its messages went and how often
     *         they waited, the first thing to read when a transfer is slower than it should be
     */
    abstract String counters();

    /** @return how many requests the comm can have in flight: one copy marker each */
    abstract int requestSlots();

    /** Closes the connection: stops the I/O threads first, so no I/O touches memory afterwards. */
    final void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (StreamWorker w : workers) {
            w.stop();
        }
        if (trace != null) {
            try {
                plugin.logger().info(LogSubsystem.NET, "NET/JcclSocket: trace of %s %s written to %s",
                        sending() ? "to" : "from", peer, trace.write());
            } catch (IOException | RuntimeException e) {
                plugin.logger().warn("NET/JcclSocket: could not write the trace of %s (%s): %s", peer,
                        CommTrace.JCCL_SOCKET_TRACE, e.getMessage());
            }
        }
        if (reservedThreads) {
            plugin.ioThreads().release();
        }
        if (staging != null) {
            try {
                staging.close();
            } catch (RuntimeException e) {
                plugin.logger().warn("NET/JcclSocket: closing the copy stream of %s: %s", peer, e.getMessage());
            }
        }
        // Under the comm's lock: the liveness thread writes a receiving comm's held-back CTS frames
        // under it (SocketRecvComm.wantFromWatch), and must never call the descriptor once the
        // kernel may have given its number to another file.
        synchronized (this) {
            out.stopDirectCalls();
            in.stopDirectCalls();
            closeQuietly(control);
        }
        for (DataStream s : streams) {
            closeQuietly(s.channel);
        }
        closeQuietly(liveness);
        plugin.logger().info(LogSubsystem.NET, "NET/JcclSocket: closed connection %s %s (%s)", sending() ? "to" : "from", peer,
                counters());
    }

    /**
     * test() found {@code r} pending. Once a request has been polled for longer than the failure
     * bound while the peer is alive, which is no failure (the peer may be computing), the comm
     * logs its state once at INFO: where a hang under a real client (NCCL) is to be looked for.
     */
    final void stillPending(SocketRequest r) {
        if (longWaitReported) {
            return;
        }
        // The liveness thread's clock (a volatile read): a poll of a pending request is NCCL's proxy
        // thread's commonest call, and a heartbeat's resolution is plenty against the bound.
        long now = livenessClock();
        if (r.firstPendingNanos == 0) {
            r.firstPendingNanos = now;
        } else if (now - r.firstPendingNanos > timeoutNanos) {
            longWaitReported = true;
            plugin.logger().info(LogSubsystem.NET, "NET/JcclSocket: a %s %s %s has been pending for %d ms, the peer "
                    + "alive (reported once per connection): %s", sending() ? "send" : "receive",
                    sending() ? "to" : "from", peer, TimeUnit.NANOSECONDS.toMillis(now - r.firstPendingNanos), state(r));
        }
    }

    /** @return the liveness thread's latest pass, in {@link System#nanoTime} units: a cheap clock */
    final long livenessClock() {
        return watch.lastPassNanos();
    }

    /** @return the comm's state around pending request {@code r}, for {@link #stillPending} */
    abstract String state(SocketRequest r);

    /** @return whether any of this comm's I/O threads still runs (a stopped comm has none) */
    final boolean anyIoThreadAlive() {
        for (StreamWorker w : workers) {
            if (w.isAlive()) {
                return true;
            }
        }
        return false;
    }

    final boolean isClosed() {
        return closed;
    }

    private static void closeQuietly(SocketChannel c) {
        try {
            c.close();
        } catch (IOException e) {
            // Closing a broken socket can fail; it is closed either way.
        }
    }
}
