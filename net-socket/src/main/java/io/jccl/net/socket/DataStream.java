package io.jccl.net.socket;

import java.io.EOFException;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.SocketChannel;

/**
 * One data stream of a comm: a TCP connection and a single-producer single-consumer ring of chunks
 * to move through it, in order. The comm's caller thread produces chunks (as it reads DATA frames
 * or posts sends); one {@link StreamWorker} consumes them, moving bytes between registered memory
 * and the socket without copies. Nothing is allocated per chunk.
 *
 * <p>The consumer is whichever thread holds the stream's consumer flag: its I/O thread, or the
 * comm's caller while the I/O thread is starved ({@link StreamWorker#helpIfStarved()}).
 */
final class DataStream {
    static final int CAPACITY = 1024;
    /** The largest receive low-water mark asked for: a larger chunk is waited for a megabyte at a time. */
    static final int LOW_WATER_CAP = 1 << 20;
    /**
     * The smallest rest of a chunk worth sleeping for: a thread woken once the bytes are there
     * starts moving them a wake-up later (15 to 60 us on a 16-vCPU virtual machine), as long as
     * NCCL's 128 KiB sendrecv chunks took to move while polled (26 to 32 us; sendrecv was slower
     * asleep in 12 of 18 rows, all_reduce's 512 KiB chunks faster in 14 of 18).
     */
    static final int LOW_WATER_MIN = 256 << 10;
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;
    private static final VarHandle LAST_MOVED;
    private static final VarHandle CONSUMING;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            HEAD = l.findVarHandle(DataStream.class, "head", long.class);
            TAIL = l.findVarHandle(DataStream.class, "tail", long.class);
            LAST_MOVED = l.findVarHandle(DataStream.class, "lastMovedNanos", long.class);
            CONSUMING = l.findVarHandle(DataStream.class, "consuming", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Index of this stream's views in a {@link MemoryRegion} (0 is the control stream). */
    final int viewIndex;
    final SocketChannel channel;
    private final boolean sending;
    /** Direct calls on a receiving stream's socket, to set its low-water mark; null: it polls instead. */
    private final NativeSocketIo lowWater;
    /** The low-water mark now set (1 is the kernel's default). Consumer's alone. */
    private int lowWaterBytes = 1;

    private final MemoryRegion[] regions = new MemoryRegion[CAPACITY];
    private final long[] offsets = new long[CAPACITY];
    private final int[] lengths = new int[CAPACITY];
    private final SocketRequest[] owners = new SocketRequest[CAPACITY];
    /** When each chunk was queued. */
    private final long[] offeredNanos = new long[CAPACITY];

    @SuppressWarnings("unused") private volatile long head; // consumer's
    @SuppressWarnings("unused") private volatile long tail; // producer's
    @SuppressWarnings("unused") private volatile long lastMovedNanos;
    /** 1 while a thread consumes (see {@link #tryProgress()}). */
    @SuppressWarnings("unused") private volatile int consuming;
    /** Bytes of the head chunk already moved; the consumer's alone. */
    private int doneInHead;
    // Timing of the chunks moved, the consumer's alone (read for the close line once the I/O
    // threads are stopped): a chunk could move from the later of its queuing and the end of the
    // chunk before it; it started when a consumer first tried it, and ended with its last byte.
    private boolean headStarted;
    private long headStartNanos;
    private long lastChunkEndNanos;
    private long chunksMoved;
    private long waitedNanos;
    private long movingNanos;
    /** Socket calls made, and those that moved nothing (a full send buffer, an empty receive queue). */
    private long socketCalls;
    private long emptyCalls;
    /** Each chunk's times for {@code JCCL_SOCKET_TRACE}; null when off. */
    private final CommTrace.Stream trace;

    DataStream(int viewIndex, SocketChannel channel, boolean sending, boolean useLowWater, CommTrace.Stream trace) {
        this.viewIndex = viewIndex;
        this.trace = trace;
        this.channel = channel;
        this.sending = sending;
        this.lowWater = !sending && useLowWater ? NativeSocketIo.of(channel) : null;
        LAST_MOVED.setRelease(this, System.nanoTime());
    }

    /** @return whether this stream writes (a send comm's) rather than reads */
    boolean sending() {
        return sending;
    }

    /** @return whether this stream waits for its bytes with a receive low-water mark rather than polling */
    boolean waitsByLowWater() {
        return lowWater != null;
    }

    /** Consumer: bytes of the head chunk still to come, or -1 with no chunk queued. */
    private long headRest() {
        long h = (long) HEAD.getOpaque(this);
        return h == (long) TAIL.getAcquire(this) ? -1 : lengths[(int) (h & (CAPACITY - 1))] - doneInHead;
    }

    /**
     * Consumer: whether its thread should sleep until the rest of the head chunk is there rather
     * than poll for it: at least {@link #LOW_WATER_MIN} bytes of it are still to come.
     * A stream with no chunk does not object.
     */
    boolean worthSleepingFor() {
        long rest = headRest();
        return rest < 0 || rest >= LOW_WATER_MIN;
    }

    /**
     * Consumer, before every block on readiness: sets the mark for the head chunk. A rest worth
     * sleeping for (at most {@link #LOW_WATER_CAP}) is waited for whole, so the thread sleeps while
     * the sender writes and then moves it in one read; a smaller rest puts the mark back to 1, or a
     * wait for it would keep the larger chunk's mark and sleep out the selector's timeout. A stream
     * with no chunk keeps its mark (bytes sent ahead of their receive then wake nobody). One
     * setsockopt when the mark changes.
     */
    void armLowWater() {
        long rest = lowWater == null ? -1 : headRest();
        if (rest < 0) {
            return;
        }
        int want = rest >= LOW_WATER_MIN ? (int) Math.min(rest, LOW_WATER_CAP) : 1;
        if (want != lowWaterBytes && lowWater.receiveLowWater(want)) {
            lowWaterBytes = want;
        }
    }

    /** Producer: chunks that can still be queued. */
    int free() {
        return CAPACITY - (int) ((long) TAIL.getOpaque(this) - (long) HEAD.getAcquire(this));
    }

    /** Producer: whether chunks are queued and not yet moved. */
    boolean busy() {
        return (long) TAIL.getOpaque(this) != (long) HEAD.getAcquire(this);
    }

    /** @return when the consumer last moved a byte, or when the stream became busy */
    long lastMovedNanos() {
        return (long) LAST_MOVED.getAcquire(this);
    }

    /** @return chunks moved so far (read once the consumers are stopped, or racy) */
    long chunksMoved() {
        return chunksMoved;
    }

    /** @return the time chunks waited for a consumer once they could move, summed */
    long waitedNanos() {
        return waitedNanos;
    }

    /** @return the time chunks took from a consumer's first try to their last byte, summed */
    long movingNanos() {
        return movingNanos;
    }

    /** @return socket calls made so far (read once the consumers are stopped, or racy) */
    long socketCalls() {
        return socketCalls;
    }

    /** @return socket calls that moved nothing: the sender ahead of the receiver, or behind it */
    long emptyCalls() {
        return emptyCalls;
    }

    /** Producer: queues a chunk; the caller has checked {@link #free()}. */
    void offer(MemoryRegion region, long offset, int length, SocketRequest owner) {
        long t = (long) TAIL.getOpaque(this);
        long now = System.nanoTime();
        if (!busy()) {
            // An idle stream has not stalled: the failure bound starts counting now.
            LAST_MOVED.setRelease(this, now);
        }
        int i = (int) (t & (CAPACITY - 1));
        regions[i] = region;
        offsets[i] = offset;
        lengths[i] = length;
        owners[i] = owner;
        offeredNanos[i] = now;
        if (trace != null) {
            trace.queued(now, length);
        }
        TAIL.setRelease(this, t + 1);
    }

    /**
     * Moves what the socket takes or gives now, unless another thread is consuming this stream.
     *
     * @return bytes moved (0 also when another thread holds the stream)
     * @throws IOException if the connection failed or the peer closed it
     */
    long tryProgress() throws IOException {
        if (!CONSUMING.compareAndSet(this, 0, 1)) {
            return 0;
        }
        try {
            return progress();
        } finally {
            CONSUMING.setRelease(this, 0);
        }
    }

    /**
     * Consumer: moves as many bytes as the socket takes or gives without blocking. Called holding
     * the flag, or by the I/O thread alone where callers never help (JCCL_SOCKET_HELP_US=0).
     *
     * @return bytes moved
     * @throws IOException if the connection failed or the peer closed it
     */
    long progress() throws IOException {
        long moved = 0;
        long h = (long) HEAD.getOpaque(this);
        long t = (long) TAIL.getAcquire(this);
        while (h < t) {
            int i = (int) (h & (CAPACITY - 1));
            if (!headStarted) {
                headStarted = true;
                headStartNanos = System.nanoTime();
                waitedNanos += headStartNanos - Math.max(offeredNanos[i], lastChunkEndNanos);
                if (trace != null) {
                    trace.started(headStartNanos);
                }
            }
            int remaining = lengths[i] - doneInHead;
            int step = (int) Math.min(remaining, MemoryRegion.WINDOW_STEP);
            var view = regions[i].view(viewIndex, offsets[i] + doneInHead, step);
            int n = sending ? channel.write(view) : channel.read(view);
            socketCalls++;
            if (n < 0) {
                throw new EOFException("the peer closed the connection");
            }
            if (n == 0) {
                emptyCalls++;
                break;
            }
            moved += n;
            doneInHead += n;
            boolean chunkDone = doneInHead == lengths[i];
            if (chunkDone) {
                // Before the owner's count, which publishes these to a caller that sees it complete.
                lastChunkEndNanos = System.nanoTime();
                movingNanos += lastChunkEndNanos - headStartNanos;
                chunksMoved++;
                headStarted = false;
                if (trace != null) {
                    trace.ended(lastChunkEndNanos);
                }
            }
            owners[i].moved(n);
            if (chunkDone) {
                regions[i] = null;
                owners[i] = null;
                doneInHead = 0;
                h++;
                HEAD.setRelease(this, h);
            }
        }
        if (moved > 0) {
            LAST_MOVED.setRelease(this, System.nanoTime());
        }
        return moved;
    }
}
