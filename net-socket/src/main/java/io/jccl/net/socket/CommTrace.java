package io.jccl.net.socket;

import io.jccl.spi.config.Env;
import io.jccl.spi.config.EnvVar;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A diagnostic: with {@code JCCL_SOCKET_TRACE} naming a directory, each comm keeps the times of its
 * last {@link #CAPACITY} requests (posted, reported done) and data-stream chunks (queued, first tried,
 * last byte) and writes them there when it closes, one file a comm. Both ends of a connection on one
 * host share {@link System#nanoTime}'s clock, so the files of two ranks line up into one timeline
 * (plugins/shim/nccl-tests/trace_timeline.py): where an operation under NCCL waits, and for whom.
 *
 * <p>Off (the default) a comm has no trace and its hot paths test one null reference. On, they store
 * into arrays made with the comm: nothing is allocated per message.
 */
final class CommTrace {
    @EnvVar(defaultValue = "",
            description = "A directory: each JcclSocket comm writes the times of its last 16384 requests (posted, "
                    + "reported done) and data-stream chunks (queued, started, ended) there when it closes, one "
                    + "file a comm, for plugins/shim/nccl-tests/trace_timeline.py. A diagnostic; unset: no trace.")
    public static final String JCCL_SOCKET_TRACE = "JCCL_SOCKET_TRACE";

    static final int CAPACITY = 1 << 14;
    private static final int MASK = CAPACITY - 1;
    /** Comms made so far in this process, per direction: NCCL makes a channel's comms in channel order. */
    private static final AtomicInteger SENDS = new AtomicInteger();
    private static final AtomicInteger RECEIVES = new AtomicInteger();

    private final Path dir;
    private final boolean sending;
    private final int ordinal;
    private final String local;
    private final String remote;
    // Requests: the caller's thread alone.
    private final long[] posted = new long[CAPACITY];
    private final long[] done = new long[CAPACITY];
    private long postedCount;
    private long doneCount;
    private final Stream[] streams;

    /** One data stream's chunks: queued by the producer, started and ended by the consumer. */
    static final class Stream {
        private final long[] queued = new long[CAPACITY];
        private final long[] started = new long[CAPACITY];
        private final long[] ended = new long[CAPACITY];
        private final int[] lengths = new int[CAPACITY];
        private long queuedCount;
        /** Chunks ended; a stream moves one chunk at a time, so also the index of the one started. */
        private long endedCount;

        /** Producer. */
        void queued(long nanos, int length) {
            int i = (int) (queuedCount++ & MASK);
            queued[i] = nanos;
            lengths[i] = length;
        }

        /** Consumer. */
        void started(long nanos) {
            started[(int) (endedCount & MASK)] = nanos;
        }

        /** Consumer. */
        void ended(long nanos) {
            ended[(int) (endedCount++ & MASK)] = nanos;
        }
    }

    private CommTrace(Path dir, boolean sending, SocketChannel control, int streamCount) {
        this.dir = dir;
        this.sending = sending;
        this.ordinal = (sending ? SENDS : RECEIVES).getAndIncrement();
        this.local = address(control, true);
        this.remote = address(control, false);
        this.streams = new Stream[streamCount];
        for (int s = 0; s < streamCount; s++) {
            streams[s] = new Stream();
        }
    }

    /** @return a trace for a new comm, or null when {@code JCCL_SOCKET_TRACE} is unset */
    static CommTrace forComm(boolean sending, SocketChannel control, int streamCount) {
        String d = Env.get(JCCL_SOCKET_TRACE);
        return d == null || d.isBlank() ? null : new CommTrace(Path.of(d), sending, control, streamCount);
    }

    Stream stream(int index) {
        return streams[index];
    }

    /** Caller's thread: a request was handed out. */
    void posted() {
        posted[(int) (postedCount++ & MASK)] = System.nanoTime();
    }

    /** Caller's thread: test() reported a request done. */
    void done() {
        done[(int) (doneCount++ & MASK)] = System.nanoTime();
    }

    /**
     * Writes the file; once the I/O threads are stopped (their last stores are then visible). A
     * failure to write is reported by the caller's log line, never thrown: it is a diagnostic.
     *
     * @return the file written
     */
    Path write() throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve("trace-" + ProcessHandle.current().pid() + "-" + (sending ? "send" : "recv") + "-"
                + ordinal + ".tsv");
        StringBuilder b = new StringBuilder(1 << 20);
        b.append("# comm\t").append(sending ? "send" : "recv").append('\t').append(ordinal).append('\t').append(local)
                .append('\t').append(remote).append('\t').append(ProcessHandle.current().pid()).append('\n');
        b.append("# R\tindex\tposted\tdone\n");
        // Rows whose both ends are still in the rings: posts run ahead of completions (and queued
        // chunks ahead of ended ones) by what is in flight, and overwrite the oldest first.
        long requests = Math.min(postedCount, doneCount);
        for (long k = Math.max(0, Math.max(postedCount, doneCount) - CAPACITY); k < requests; k++) {
            int i = (int) (k & MASK);
            b.append("R\t").append(k).append('\t').append(posted[i]).append('\t').append(done[i]).append('\n');
        }
        b.append("# C\tstream\tindex\tlength\tqueued\tstarted\tended\n");
        for (int s = 0; s < streams.length; s++) {
            Stream t = streams[s];
            long chunks = Math.min(t.queuedCount, t.endedCount);
            for (long k = Math.max(0, t.queuedCount - CAPACITY); k < chunks; k++) {
                int i = (int) (k & MASK);
                b.append("C\t").append(s).append('\t').append(k).append('\t').append(t.lengths[i]).append('\t')
                        .append(t.queued[i]).append('\t').append(t.started[i]).append('\t').append(t.ended[i]).append('\n');
            }
        }
        Files.writeString(file, b);
        return file;
    }

    private static String address(SocketChannel c, boolean localEnd) {
        try {
            SocketAddress a = localEnd ? c.getLocalAddress() : c.getRemoteAddress();
            return String.valueOf(a).replaceFirst("^.*/", "");
        } catch (IOException e) {
            return "?";
        }
    }
}
