package io.jccl.net.collnet;

import io.jccl.spi.DataType;
import io.jccl.spi.NetLogger;
import io.jccl.spi.ReduceOp;
import io.jccl.spi.LogSubsystem;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One group's reductions, as a switch does them: every rank's chunk {@code g} arrives, the
 * chunks are reduced in rank order (so every run gives the same bits), and the result goes back
 * to every rank. {@code window} chunks are in flight at once, each in a slot of its own, so
 * receiving, reducing and sending back overlap (the pipeline).
 *
 * <p>Per rank three threads with blocking I/O: a reader (chunks in), a writer (results out) and
 * a heartbeat echo. Any rank's end (EOF, a protocol error, heartbeat silence) fails the group:
 * every rank is sent the reason in place of its next result not yet reduced (a reduction that
 * completed is still delivered), and the connections are closed.
 */
final class AggregatorGroup {
    /** How long a failed group waits for its reasons to be written before it closes the connections. */
    private static final long CLOSE_GRACE_MS = 2000;

    private final String name;
    private final int n;
    private final int chunkBytes;
    private final int window;
    private final long timeoutMs;
    private final SocketChannel[] data;
    private final SocketChannel[] beats;
    private final NetLogger log;
    private final Arena arena = Arena.ofShared();
    /** Per slot, per rank, that rank's chunk; after the reduction the slot's rank 0 part holds the result. */
    private final MemorySegment[][] parts;
    private final ByteBuffer[][] inViews;
    /** Per slot, per rank, a view of the slot's result for that rank's writer. */
    private final ByteBuffer[][] outViews;
    // Slot state, guarded by this.
    private final long[] accepting;
    private final int[] arrived;
    private final int[] sent;
    private final boolean[] ready;
    private final int[] bytes;
    private final DataType[] types;
    private final ReduceOp[] ops;
    private final int[] firstRank;
    private String failure;
    private int liveThreads;
    private long chunksReduced;
    private long bytesReduced;
    private final Runnable onEnd;

    AggregatorGroup(String name, SocketChannel[] data, SocketChannel[] beats, int chunkBytes, int window, long timeoutMs,
                    NetLogger log, Runnable onEnd) {
        this.name = name;
        this.n = data.length;
        this.data = data;
        this.beats = beats;
        this.chunkBytes = chunkBytes;
        this.window = window;
        this.timeoutMs = timeoutMs;
        this.log = log;
        this.onEnd = onEnd;
        parts = new MemorySegment[window][n];
        inViews = new ByteBuffer[window][n];
        outViews = new ByteBuffer[window][n];
        for (int s = 0; s < window; s++) {
            for (int r = 0; r < n; r++) {
                parts[s][r] = arena.allocate(chunkBytes, 4096);
                inViews[s][r] = parts[s][r].asByteBuffer();
            }
            for (int r = 0; r < n; r++) {
                outViews[s][r] = parts[s][0].asByteBuffer();
            }
        }
        accepting = new long[window];
        for (int s = 0; s < window; s++) {
            accepting[s] = s;
        }
        arrived = new int[window];
        sent = new int[window];
        ready = new boolean[window];
        bytes = new int[window];
        types = new DataType[window];
        ops = new ReduceOp[window];
        firstRank = new int[window];
    }

    void start() {
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            threads.add(Thread.ofPlatform().daemon().name("jccl-collnet-in-" + name + "-" + r).unstarted(() -> reader(rank)));
            threads.add(Thread.ofPlatform().daemon().name("jccl-collnet-out-" + name + "-" + r).unstarted(() -> writer(rank)));
            threads.add(Thread.ofPlatform().daemon().name("jccl-collnet-beat-" + name + "-" + r).unstarted(() -> echo(rank)));
        }
        synchronized (this) {
            liveThreads = threads.size();
        }
        threads.forEach(Thread::start);
    }

    /** Fails the group from outside (the aggregator closes). */
    void shutDown(String reason) {
        fail(reason, busy());
    }

    private void reader(int r) {
        ByteBuffer h = ByteBuffer.allocateDirect(Wire.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        long expected = 0;
        try {
            while (true) {
                h.clear();
                if (!readFully(data[r], h)) {
                    boolean busy = busy();
                    fail("rank " + r + " closed its connection" + (busy ? " with reductions in flight" : ""), busy);
                    return;
                }
                long g = h.getLong(0);
                int b = h.getInt(8);
                int typeCode = h.get(12);
                int opCode = h.get(13);
                DataType type = typeCode >= 0 && typeCode < DataType.values().length ? DataType.fromCode(typeCode) : null;
                ReduceOp op = opCode >= 0 && opCode < ReduceOp.values().length ? ReduceOp.fromCode(opCode) : null;
                if (g != expected || b <= 0 || b > chunkBytes || type == null || op == null
                        || !Reductions.supports(type, op) || b % type.size() != 0) {
                    fail("rank " + r + " sent a malformed chunk header (chunk " + g + ", expected " + expected + "; "
                            + b + " bytes; type " + typeCode + ", op " + opCode + ")", true);
                    return;
                }
                expected++;
                int slot = (int) (g % window);
                synchronized (this) {
                    while (accepting[slot] != g && failure == null) {
                        wait();
                    }
                    if (failure != null) {
                        return;
                    }
                }
                ByteBuffer v = inViews[slot][r];
                v.clear().limit(b);
                if (!readFully(data[r], v)) {
                    fail("rank " + r + " closed its connection in the middle of chunk " + g, true);
                    return;
                }
                boolean last;
                synchronized (this) {
                    if (arrived[slot] == 0) {
                        bytes[slot] = b;
                        types[slot] = type;
                        ops[slot] = op;
                        firstRank[slot] = r;
                    } else if (bytes[slot] != b || types[slot] != type || ops[slot] != op) {
                        failLocked("rank " + r + "'s chunk " + g + " is " + b + " bytes of " + op.testsName() + "/"
                                + type.testsName() + " but rank " + firstRank[slot] + "'s is " + bytes[slot] + " bytes of "
                                + ops[slot].testsName() + "/" + types[slot].testsName()
                                + ": every rank must issue the same iallreduce calls in the same order", true);
                        return;
                    }
                    last = ++arrived[slot] == n;
                }
                if (last) {
                    for (int k = 1; k < n; k++) {
                        Reductions.reduce(type, op, parts[slot][0], parts[slot][k], b);
                    }
                    synchronized (this) {
                        ready[slot] = true;
                        chunksReduced++;
                        bytesReduced += b;
                        notifyAll();
                    }
                }
            }
        } catch (IOException e) {
            fail("rank " + r + "'s connection failed: " + e.getMessage(), true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            threadEnded();
        }
    }

    private void writer(int r) {
        ByteBuffer h = ByteBuffer.allocateDirect(Wire.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        long g = 0;
        try {
            while (true) {
                int slot = (int) (g % window);
                int b;
                String reason;
                synchronized (this) {
                    while (!(ready[slot] && accepting[slot] == g) && failure == null) {
                        wait();
                    }
                    // A reduction that completed goes out even after a failure: a rank that got its
                    // result and closed (or died) must not take the others' results of it with it.
                    reason = ready[slot] && accepting[slot] == g ? null : failure;
                    b = bytes[slot];
                }
                if (reason != null) {
                    byte[] text = reason.getBytes(StandardCharsets.UTF_8);
                    int len = Math.min(text.length, Wire.MAX_TEXT);
                    h.clear();
                    h.putLong(0, g).putInt(8, len).putInt(12, 1);
                    writeFully(data[r], h);
                    writeFully(data[r], ByteBuffer.wrap(text, 0, len));
                    data[r].shutdownOutput();
                    return;
                }
                h.clear();
                h.putLong(0, g).putInt(8, b).putInt(12, 0);
                writeFully(data[r], h);
                ByteBuffer v = outViews[slot][r];
                v.clear().limit(b);
                writeFully(data[r], v);
                synchronized (this) {
                    if (++sent[slot] == n) {
                        accepting[slot] = g + window;
                        ready[slot] = false;
                        arrived[slot] = 0;
                        sent[slot] = 0;
                        notifyAll();
                    }
                }
                g++;
            }
        } catch (IOException e) {
            fail("cannot send to rank " + r + ": " + e.getMessage(), true);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            threadEnded();
        }
    }

    /** Echoes the rank's heartbeats; silence past the timeout means the rank is frozen or gone. */
    private void echo(int r) {
        try {
            beats[r].socket().setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMs));
            InputStream in = beats[r].socket().getInputStream();
            OutputStream out = beats[r].socket().getOutputStream();
            while (true) {
                int x = in.read();
                if (x < 0) {
                    boolean busy = busy();
                    fail("rank " + r + "'s heartbeat connection closed: the rank left or died", busy);
                    return;
                }
                out.write(x);
            }
        } catch (SocketTimeoutException e) {
            fail("rank " + r + " sent no heartbeat for " + timeoutMs + " ms (JCCL_COLLNET_TIMEOUT_MS): it is frozen, "
                    + "hung or unreachable", true);
        } catch (IOException e) {
            if (!failed()) {
                fail("rank " + r + "'s heartbeat connection failed: " + e.getMessage(), true);
            }
        } finally {
            threadEnded();
        }
    }

    private synchronized boolean busy() {
        for (int s = 0; s < window; s++) {
            if (arrived[s] > 0) {
                return true;
            }
        }
        return false;
    }

    private synchronized boolean failed() {
        return failure != null;
    }

    private void fail(String reason, boolean warn) {
        synchronized (this) {
            failLocked(reason, warn);
        }
    }

    private void failLocked(String reason, boolean warn) {
        if (failure != null) {
            return;
        }
        failure = "JcclCollNet group " + name + ": " + reason;
        notifyAll();
        String summary = failure + " (the group reduced " + chunksReduced + " chunks, " + bytesReduced + " bytes a rank)";
        if (warn) {
            log.warn("%s", summary);
        } else {
            log.info(LogSubsystem.NET, "%s", summary);
        }
        Thread.ofPlatform().daemon().name("jccl-collnet-close-" + name).start(() -> {
            try {
                Thread.sleep(CLOSE_GRACE_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            closeAll();
        });
        // The connections stay open for the grace period so that every rank reads the reason
        // before its heartbeat connection closes.
    }

    private void closeAll() {
        for (int r = 0; r < n; r++) {
            closeQuietly(data[r]);
            closeQuietly(beats[r]);
        }
    }

    private static void closeQuietly(SocketChannel c) {
        try {
            c.close();
        } catch (IOException e) {
            // Closing a failed connection only has to release it.
        }
    }

    private void threadEnded() {
        boolean last;
        synchronized (this) {
            last = --liveThreads == 0;
        }
        if (last) {
            closeAll();
            arena.close();
            onEnd.run();
        }
    }

    /** @return false on EOF before the first byte; EOF after it throws */
    private static boolean readFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                if (b.position() == 0) {
                    return false;
                }
                throw new EOFException("connection closed in the middle of a frame");
            }
        }
        return true;
    }

    private static void writeFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }
}
