package io.jccl.net.collnet;

import io.jccl.spi.CollComm;
import io.jccl.spi.DataType;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import io.jccl.spi.ReduceOp;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

/**
 * A rank's end of a JcclCollNet group: one connection to the aggregator for data, one for
 * heartbeats. {@code iallreduce} queues a request; {@code test} moves the queued requests'
 * chunks out (at most {@code window} ahead of the results) and the results in, without blocking
 * and without allocating: requests are pooled, and the registered buffers are read and written
 * through views made at registration.
 */
final class CollNetComm implements CollComm {
    /** Requests in flight per comm; {@code iallreduce} returns null (would block) beyond. */
    static final int MAX_REQUESTS = 32;

    /** A registered buffer and its two views: one the sender moves through, one the receiver. */
    static final class Registration implements MemoryHandle {
        final CollNetComm comm;
        final MemorySegment memory;
        final ByteBuffer sendView;
        final ByteBuffer recvView;

        Registration(CollNetComm comm, MemorySegment memory) {
            this.comm = comm;
            this.memory = memory;
            this.sendView = memory.asByteBuffer();
            this.recvView = memory.asByteBuffer();
        }

        @Override
        public String toString() {
            return "JcclCollNet registration of " + memory.byteSize() + " bytes";
        }
    }

    /** One iallreduce: its chunks are numbered on from the comm's chunk count when it is sent. */
    static final class Request implements NetRequest {
        final CollNetComm comm;
        boolean inUse;
        boolean returned;
        Registration send;
        Registration recv;
        long sendOffset;
        long recvOffset;
        int bytes;
        DataType type;
        ReduceOp op;
        int chunks;
        int chunksSent;
        int chunksReceived;
        NetException error;

        Request(CollNetComm comm) {
            this.comm = comm;
        }

        boolean complete() {
            return chunksReceived == chunks;
        }
    }

    private final int rank;
    private final String where;
    private final SocketChannel data;
    private final SocketChannel beat;
    private final int chunkBytes;
    private final int window;
    private final long timeoutMs;
    private final long heartbeatMs;
    private final Aggregator hosted;
    private final Set<Registration> registrations = new HashSet<>();
    private final Request[] ring = new Request[MAX_REQUESTS];
    /** Requests issued ({@code tail}), handed back in order ({@code head}), being sent, being received. */
    private long head;
    private long tail;
    private long sendIndex;
    private long recvIndex;
    private long chunksSent;
    private long chunksReceived;
    private final ByteBuffer sendHeader = ByteBuffer.allocateDirect(Wire.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer[] sendPair = new ByteBuffer[2];
    private boolean sending;
    private final ByteBuffer recvHeader = ByteBuffer.allocateDirect(Wire.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private ByteBuffer recvPayload;
    private ByteBuffer reasonText;
    private NetException failure;
    private volatile String heartbeatFailure;
    private volatile boolean closed;

    CollNetComm(int rank, String where, SocketChannel data, SocketChannel beat, int chunkBytes, int window, long timeoutMs,
                long heartbeatMs, Aggregator hosted) {
        this.rank = rank;
        this.where = where;
        this.data = data;
        this.beat = beat;
        this.chunkBytes = chunkBytes;
        this.window = window;
        this.timeoutMs = timeoutMs;
        this.heartbeatMs = heartbeatMs;
        this.hosted = hosted;
        for (int i = 0; i < MAX_REQUESTS; i++) {
            ring[i] = new Request(this);
        }
        sendPair[0] = sendHeader;
        Thread.ofPlatform().daemon().name("jccl-collnet-heartbeat").start(this::heartbeats);
    }

    // ------------------------------------------------------------------ registrations (service thread)

    synchronized Registration register(MemorySegment memory) throws NetException {
        if (memory.byteSize() > Integer.MAX_VALUE) {
            throw NetException.invalidArgument("JcclCollNet registers at most 2 GiB - 1 at once; got "
                    + memory.byteSize() + " bytes (register the buffer in parts)");
        }
        Registration r = new Registration(this, memory);
        registrations.add(r);
        return r;
    }

    synchronized void deregister(MemoryHandle handle) throws NetException {
        if (!(handle instanceof Registration r) || !registrations.remove(r)) {
            throw NetException.invalidArgument("deregMr: " + handle + " is not a live registration of this comm");
        }
    }

    // ------------------------------------------------------------------ data path (progress thread)

    synchronized NetRequest iallreduce(MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op,
                                       MemoryHandle sendHandle, MemoryHandle recvHandle) throws NetException {
        if (type == null || op == null || !Reductions.supports(type, op)) {
            throw NetException.invalidArgument("JcclCollNet does not reduce " + (op == null ? "null" : op.testsName())
                    + " over " + (type == null ? "null" : type.testsName()) + " (reduceSupport says so)");
        }
        long bytes = count * type.size();
        if (count < 0 || bytes > Integer.MAX_VALUE) {
            throw NetException.invalidArgument("iallreduce of " + count + " elements: 0 to 2 GiB - 1 bytes at once");
        }
        Registration s = registration(sendHandle, "send");
        Registration r = registration(recvHandle, "recv");
        long sendOffset = offset(s, send, bytes, "sendData");
        long recvOffset = offset(r, recv, bytes, "recvData");
        failIfBroken();
        if (tail - head == MAX_REQUESTS) {
            return null;
        }
        Request q = ring[(int) (tail % MAX_REQUESTS)];
        q.inUse = true;
        q.returned = false;
        q.send = s;
        q.recv = r;
        q.sendOffset = sendOffset;
        q.recvOffset = recvOffset;
        q.bytes = (int) bytes;
        q.type = type;
        q.op = op;
        q.chunks = (int) ((bytes + chunkBytes - 1) / chunkBytes);
        q.chunksSent = 0;
        q.chunksReceived = 0;
        q.error = null;
        tail++;
        progress();
        return q;
    }

    synchronized boolean test(NetRequest request, int[] size) throws NetException {
        if (!(request instanceof Request q) || q.comm != this || !q.inUse || q.returned) {
            throw NetException.invalidArgument("test: " + request + " is not a pending request of this JcclCollNet comm");
        }
        if (failure == null && !closed) {
            progress();
        }
        if (q.error == null && !q.complete() && failure != null) {
            q.error = failure;
        }
        if (q.error != null) {
            release(q);
            throw q.error;
        }
        if (!q.complete()) {
            return false;
        }
        if (size != null) {
            size[0] = q.bytes;
        }
        release(q);
        return true;
    }

    private void release(Request q) {
        q.returned = true;
        while (head < tail && ring[(int) (head % MAX_REQUESTS)].returned) {
            ring[(int) (head % MAX_REQUESTS)].inUse = false;
            head++;
        }
    }

    private Registration registration(MemoryHandle handle, String which) throws NetException {
        if (!(handle instanceof Registration r) || r.comm != this || !registrations.contains(r)) {
            throw NetException.invalidArgument("iallreduce: the " + which + " handle is not a live registration of "
                    + "this comm");
        }
        return r;
    }

    private static long offset(Registration r, MemorySegment segment, long bytes, String which) throws NetException {
        long off = segment.address() - r.memory.address();
        if (off < 0 || off + bytes > r.memory.byteSize() || segment.byteSize() < bytes) {
            throw NetException.invalidArgument("iallreduce: " + which + " (" + bytes + " bytes) lies outside its "
                    + "registration of " + r.memory.byteSize() + " bytes");
        }
        return off;
    }

    private void failIfBroken() throws NetException {
        if (closed) {
            throw NetException.invalidUsage("this JcclCollNet comm is closed");
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Moves what can move now; a failure is recorded for every pending request. */
    private void progress() {
        try {
            while (true) {
                boolean moved = sendSome() | receiveSome();
                if (!moved) {
                    break;
                }
            }
        } catch (IOException e) {
            fail(NetException.remoteError("JcclCollNet: the connection to the aggregator at " + where + " failed: "
                    + e.getMessage(), e));
            return;
        } catch (NetException e) {
            fail(e);
            return;
        }
        String beatFailure = heartbeatFailure;
        if (beatFailure != null && failure == null && head < tail) {
            fail(NetException.remoteError(beatFailure));
        }
    }

    private boolean sendSome() throws IOException {
        boolean moved = false;
        while (true) {
            if (!sending) {
                while (sendIndex < tail && ring[(int) (sendIndex % MAX_REQUESTS)].chunksSent
                        == ring[(int) (sendIndex % MAX_REQUESTS)].chunks) {
                    sendIndex++;
                }
                if (sendIndex == tail || chunksSent - chunksReceived >= window) {
                    return moved;
                }
                Request q = ring[(int) (sendIndex % MAX_REQUESTS)];
                long off = (long) q.chunksSent * chunkBytes;
                int len = (int) Math.min(chunkBytes, q.bytes - off);
                sendHeader.clear();
                sendHeader.putLong(0, chunksSent).putInt(8, len).put(12, (byte) q.type.code()).put(13, (byte) q.op.code())
                        .putShort(14, (short) 0);
                ByteBuffer v = q.send.sendView;
                v.clear();
                v.position((int) (q.sendOffset + off)).limit((int) (q.sendOffset + off + len));
                sendPair[1] = v;
                sending = true;
            }
            data.write(sendPair);
            if (sendPair[1].hasRemaining()) {
                return moved;
            }
            moved = true;
            sending = false;
            chunksSent++;
            ring[(int) (sendIndex % MAX_REQUESTS)].chunksSent++;
        }
    }

    private boolean receiveSome() throws IOException, NetException {
        boolean moved = false;
        while (true) {
            if (reasonText != null) {
                if (data.read(reasonText) < 0 || !reasonText.hasRemaining()) {
                    String text = new String(reasonText.array(), 0, reasonText.position(), StandardCharsets.UTF_8);
                    throw NetException.remoteError(text);
                }
                return moved;
            }
            if (recvPayload == null) {
                int n = data.read(recvHeader);
                if (n < 0) {
                    throw NetException.remoteError("JcclCollNet: the aggregator at " + where + " closed the connection"
                            + " (it or a rank of the group is gone)");
                }
                if (recvHeader.hasRemaining()) {
                    return moved;
                }
                long g = recvHeader.getLong(0);
                int len = recvHeader.getInt(8);
                int status = recvHeader.getInt(12);
                recvHeader.clear();
                if (status != 0) {
                    reasonText = ByteBuffer.allocate(Math.max(0, Math.min(len, Wire.MAX_TEXT)));
                    continue;
                }
                while (recvIndex < tail && ring[(int) (recvIndex % MAX_REQUESTS)].complete()) {
                    recvIndex++;
                }
                if (g != chunksReceived || recvIndex == tail) {
                    throw NetException.internalError("JcclCollNet: the aggregator sent chunk " + g + " where chunk "
                            + chunksReceived + " was due");
                }
                Request q = ring[(int) (recvIndex % MAX_REQUESTS)];
                long off = (long) q.chunksReceived * chunkBytes;
                int want = (int) Math.min(chunkBytes, q.bytes - off);
                if (len != want) {
                    throw NetException.internalError("JcclCollNet: the aggregator's result for chunk " + g + " has "
                            + len + " bytes; " + want + " were sent");
                }
                ByteBuffer v = q.recv.recvView;
                v.clear();
                v.position((int) (q.recvOffset + off)).limit((int) (q.recvOffset + off + len));
                recvPayload = v;
            }
            if (data.read(recvPayload) < 0) {
                throw NetException.remoteError("JcclCollNet: the aggregator at " + where + " closed the connection "
                        + "in the middle of a result");
            }
            if (recvPayload.hasRemaining()) {
                return moved;
            }
            moved = true;
            recvPayload = null;
            chunksReceived++;
            ring[(int) (recvIndex % MAX_REQUESTS)].chunksReceived++;
        }
    }

    private void fail(NetException e) {
        if (failure == null) {
            failure = e;
        }
        for (long i = head; i < tail; i++) {
            Request q = ring[(int) (i % MAX_REQUESTS)];
            if (!q.returned && !q.complete() && q.error == null) {
                q.error = failure;
            }
        }
        closeChannels();
    }

    /** Pings the aggregator every period; an echo missing for the timeout means it is frozen or gone. */
    private void heartbeats() {
        try {
            beat.socket().setSoTimeout((int) Math.min(Integer.MAX_VALUE, timeoutMs));
            InputStream in = beat.socket().getInputStream();
            OutputStream out = beat.socket().getOutputStream();
            while (!closed) {
                out.write(1);
                if (in.read() < 0) {
                    heartbeatFailure = "JcclCollNet: the aggregator at " + where + " closed the heartbeat connection "
                            + "(it or a rank of the group is gone)";
                    return;
                }
                Thread.sleep(heartbeatMs);
            }
        } catch (SocketTimeoutException e) {
            heartbeatFailure = "JcclCollNet: no heartbeat from the aggregator at " + where + " for " + timeoutMs
                    + " ms (JCCL_COLLNET_TIMEOUT_MS): it is frozen, hung or unreachable";
        } catch (IOException e) {
            if (!closed) {
                heartbeatFailure = "JcclCollNet: the heartbeat connection to the aggregator at " + where + " failed: "
                        + e.getMessage();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void closeChannels() {
        try {
            data.close();
        } catch (IOException e) {
            // Closing only has to release the socket.
        }
        try {
            beat.close();
        } catch (IOException e) {
            // As above.
        }
    }

    /** Closes the comm: pending requests fail, and an aggregator this rank runs stops with the reason. */
    synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        fail(NetException.remoteError("JcclCollNet: the comm was closed with this request in flight"));
        if (hosted != null) {
            hosted.close("rank " + rank + ", which runs the group's aggregator, closed its comm");
        }
    }
}
