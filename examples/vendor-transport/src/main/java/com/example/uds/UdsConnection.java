package com.example.uds;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * One end of a connection: a non-blocking Unix domain stream socket, a fixed pool of
 * {@link NetPlugin#MAX_REQUESTS} requests and the queue of posted ones in posting order.
 *
 * <h2>Wire protocol (receiver-driven)</h2>
 * For every posted receive the receiver writes a clear-to-send frame: its capacity, 8 bytes. For
 * every send the sender waits for the next clear-to-send, then writes a header (the message size,
 * 8 bytes) and the payload. A message larger than its receive is announced by its header and not
 * sent: both sides fail their request with ncclInvalidUsage and the stream stays in step. Because
 * data only flows against a posted receive, nothing is ever buffered on the receiving side beyond
 * the bytes of receives that are waiting for them.
 *
 * <h2>Data path</h2>
 * Every call is non-blocking and allocates nothing: requests come from the pool, frames go through
 * small direct buffers of the connection, and payloads move between the socket and the caller's
 * memory through the registration's {@link ByteBuffer} view (no byte[] copies). Progress happens in
 * {@link #test} and in the posting calls. Normal states are return values; a broken socket is
 * sticky: every pending and every later request fails with ncclRemoteError.
 *
 * <p>A connection is used by one thread at a time (NetPlugin's rule); the methods are synchronized
 * only so that a close from another thread cannot interleave with a data call.
 */
abstract sealed class UdsConnection permits UdsConnection.Sender, UdsConnection.Receiver {
    private static final int SLOTS = NetPlugin.MAX_REQUESTS;
    private static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0);

    enum State { FREE, PENDING, DONE, FAILED }

    /** A pooled request; the caller holds it from posting until test returns true. */
    static final class Request implements NetRequest {
        final UdsConnection owner;
        State state = State.FREE;
        long size;          // send: message bytes; receive: capacity, then the bytes announced
        ByteBuffer buffer;  // the registration's view (or EMPTY), windowed when the payload moves
        int offset;         // where the message starts in buffer
        boolean headerDone; // the size header was written (sender) or read (receiver)
        long capacity;      // sender: capacity of the matching receive, -1 until its clear-to-send came
        NetException error;

        Request(UdsConnection owner) {
            this.owner = owner;
        }
    }

    final SocketChannel channel;
    private final Request[] free = new Request[SLOTS];
    private int freeCount;
    private final Request[] queue = new Request[SLOTS];
    private int head;
    private int queued;
    private NetException failure;
    private boolean closed;

    UdsConnection(SocketChannel channel) {
        this.channel = channel;
        for (int i = 0; i < SLOTS; i++) {
            free[freeCount++] = new Request(this);
        }
    }

    /** Moves whatever can move now without blocking; throws IOException when the socket broke. */
    abstract void progress() throws IOException;

    /** @return a human description for error messages */
    abstract String role();

    // ---------------------------------------------------------------------------------------------
    // Posting and testing

    /**
     * @return a request holding the message, queued in posting order, or {@code null} when all
     *         {@link NetPlugin#MAX_REQUESTS} slots are taken (the caller retries)
     */
    final synchronized Request post(MemorySegment data, MemoryHandle mhandle) throws NetException {
        if (failure != null) {
            throw failure;
        }
        if (closed) {
            throw NetException.internalError(ExampleUdsPlugin.NAME + ": " + role() + " used after it was closed");
        }
        Registration reg = Registration.check(this, mhandle, data);
        if (freeCount == 0) {
            return null;
        }
        Request r = free[--freeCount];
        r.state = State.PENDING;
        r.size = data.byteSize();
        r.headerDone = false;
        r.capacity = -1;
        r.error = null;
        if (r.size == 0) {
            r.buffer = EMPTY;
            r.offset = 0;
        } else if (reg.view != null) {
            r.buffer = reg.view;
            r.offset = (int) (data.address() - reg.base);
        } else {
            // Registrations over 2 GiB have no single ByteBuffer view: one per message instead.
            r.buffer = data.asByteBuffer();
            r.offset = 0;
        }
        queue[(head + queued++) % SLOTS] = r;
        posted(r);
        drive();
        return r;
    }

    /** Called with a request just queued, before progress; the receiver announces it here. */
    void posted(Request r) {
    }

    final synchronized boolean test(Request r, int[] sizes) throws NetException {
        if (r.owner != this || r.state == State.FREE) {
            throw NetException.internalError(ExampleUdsPlugin.NAME + ": test of a request that is not in flight");
        }
        if (r.state == State.PENDING) {
            drive();
            if (r.state == State.PENDING) {
                return false;
            }
        }
        // Complete: the request goes back to the pool before the caller sees the result.
        State s = r.state;
        NetException error = r.error;
        if (sizes != null && s == State.DONE) {
            sizes[0] = (int) r.size;
        }
        r.state = State.FREE;
        r.buffer = null;
        r.error = null;
        free[freeCount++] = r;
        if (s == State.FAILED) {
            throw error;
        }
        return true;
    }

    private void drive() {
        if (failure != null || closed) {
            return;
        }
        try {
            progress();
        } catch (IOException e) {
            fail(NetException.remoteError(ExampleUdsPlugin.NAME + ": " + role() + ": the peer closed the connection"
                    + " or died (" + e.getMessage() + ")"));
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Helpers for the two ends

    /** @return the oldest posted request whose data has not moved yet, or null */
    final Request current() {
        return queued == 0 ? null : queue[head];
    }

    /** Finishes the oldest request, successfully or with {@code error}. */
    final void complete(Request r, NetException error) {
        queue[head] = null;
        head = (head + 1) % SLOTS;
        queued--;
        r.state = error == null ? State.DONE : State.FAILED;
        r.error = error;
    }

    /** Points the request's buffer at its payload: position and limit, no copy, no allocation. */
    static ByteBuffer window(Request r, long bytes) {
        ByteBuffer b = r.buffer;
        b.limit(r.offset + (int) bytes);
        b.position(r.offset);
        return b;
    }

    /** Makes the failure sticky, fails every queued request, and closes the socket so the peer sees it too. */
    private void fail(NetException e) {
        failure = e;
        while (queued > 0) {
            complete(queue[head], e);
        }
        closeChannel();
    }

    private void closeChannel() {
        try {
            channel.close();
        } catch (IOException e) {
            // Nothing is left to release; the descriptor is gone either way.
        }
    }

    /** Closes the connection: pending requests fail, the peer sees EOF and fails its own. */
    final synchronized void close() {
        if (!closed) {
            closed = true;
            NetException e = NetException.remoteError(ExampleUdsPlugin.NAME + ": " + role() + " was closed");
            while (queued > 0) {
                complete(queue[head], e);
            }
            closeChannel();
        }
    }

    // ---------------------------------------------------------------------------------------------

    /** The sending end, returned by connect. */
    static final class Sender extends UdsConnection implements SendComm {
        /** Clear-to-send frames read ahead; at most one per receive the peer has pending. */
        private final ByteBuffer cts = ByteBuffer.allocateDirect(8 * SLOTS);
        private final ByteBuffer header = ByteBuffer.allocateDirect(8);

        Sender(SocketChannel channel) {
            super(channel);
        }

        @Override
        String role() {
            return "send comm";
        }

        @Override
        void progress() throws IOException {
            Request r;
            while ((r = current()) != null) {
                if (r.capacity < 0) {
                    if (cts.position() < 8 && channel.read(cts) < 0) {
                        throw new IOException("end of stream");
                    }
                    if (cts.position() < 8) {
                        return; // the receiver has not posted the matching receive yet
                    }
                    cts.flip();
                    r.capacity = cts.getLong();
                    cts.compact();
                    header.clear();
                    header.putLong(0, r.size);
                }
                if (!r.headerDone) {
                    channel.write(header);
                    if (header.hasRemaining()) {
                        return;
                    }
                    r.headerDone = true;
                    if (r.size > r.capacity) {
                        // The receiver fails its side on reading the header; no payload follows.
                        complete(r, NetException.invalidUsage(ExampleUdsPlugin.NAME + ": a " + r.size
                                + "-byte send met a " + r.capacity + "-byte receive; messages are never truncated"));
                        continue;
                    }
                    window(r, r.size);
                }
                ByteBuffer b = r.buffer;
                while (b.hasRemaining()) {
                    if (channel.write(b) == 0) {
                        return; // socket buffer full: the receiver drains it in its own test
                    }
                }
                complete(r, null);
            }
        }
    }

    /** The receiving end, returned by accept. */
    static final class Receiver extends UdsConnection implements RecvComm {
        /** Clear-to-send frames not yet written; at most one per pending receive. */
        private final ByteBuffer cts = ByteBuffer.allocateDirect(8 * SLOTS);
        private final ByteBuffer header = ByteBuffer.allocateDirect(8);

        Receiver(SocketChannel channel) {
            super(channel);
        }

        @Override
        String role() {
            return "receive comm";
        }

        @Override
        void posted(Request r) {
            cts.putLong(r.size);
        }

        @Override
        void progress() throws IOException {
            if (cts.position() > 0) {
                cts.flip();
                channel.write(cts);
                cts.compact();
            }
            Request r;
            while ((r = current()) != null) {
                if (!r.headerDone) {
                    if (channel.read(header) < 0) {
                        throw new IOException("end of stream");
                    }
                    if (header.hasRemaining()) {
                        return;
                    }
                    long size = header.getLong(0);
                    header.clear();
                    r.headerDone = true;
                    if (size < 0) {
                        throw new IOException("corrupt header (size " + size + ")");
                    }
                    if (size > r.size) {
                        complete(r, NetException.invalidUsage(ExampleUdsPlugin.NAME + ": a " + size
                                + "-byte message arrived for a " + r.size + "-byte receive; messages are never truncated"));
                        continue;
                    }
                    r.size = size;
                    window(r, size);
                }
                ByteBuffer b = r.buffer;
                while (b.hasRemaining()) {
                    int n = channel.read(b);
                    if (n < 0) {
                        throw new IOException("end of stream in the middle of a message");
                    }
                    if (n == 0) {
                        return;
                    }
                }
                complete(r, null);
            }
        }
    }
}
