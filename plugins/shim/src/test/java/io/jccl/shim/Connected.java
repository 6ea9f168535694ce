package io.jccl.shim;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Test helper: a loopback connection of any transport, with a registered send and receive buffer,
 * driven from one thread with deadlines so that a broken bridge fails a test instead of hanging it.
 */
final class Connected implements AutoCloseable {
    static final long DEADLINE_NS = 20_000_000_000L;

    final NetPlugin net;
    final Arena arena = Arena.ofShared();
    final ListenComm listen;
    final SendComm send;
    final RecvComm recv;
    final MemorySegment src;
    final MemorySegment dst;
    final MemoryHandle srcHandle;
    final MemoryHandle dstHandle;

    Connected(NetPlugin net, long bufferBytes) throws NetException {
        this.net = net;
        NetHandle handle = NetHandle.allocate();
        listen = net.listen(0, handle);
        SendComm s = null;
        RecvComm r = null;
        long deadline = System.nanoTime() + DEADLINE_NS;
        while (s == null || r == null) {
            if (s == null) {
                s = net.connect(0, handle);
            }
            if (r == null) {
                r = net.accept(listen);
            }
            if (System.nanoTime() > deadline) {
                fail("connect/accept did not complete in time");
            }
        }
        send = s;
        recv = r;
        src = arena.allocate(bufferBytes, 4096);
        dst = arena.allocate(bufferBytes, 4096);
        srcHandle = net.regMr(send, src, PointerType.HOST);
        dstHandle = net.regMr(recv, dst, PointerType.HOST);
    }

    NetRequest irecv(MemorySegment[] buffers, int[] tags) throws NetException {
        MemoryHandle[] handles = new MemoryHandle[buffers.length];
        java.util.Arrays.fill(handles, dstHandle);
        long deadline = System.nanoTime() + DEADLINE_NS;
        while (true) {
            NetRequest r = net.irecv(recv, buffers.length, buffers, tags, handles);
            if (r != null) {
                return r;
            }
            if (System.nanoTime() > deadline) {
                fail("irecv never accepted");
            }
        }
    }

    /** isend, progressing {@code pendingRecv} meanwhile (the transport is receiver-driven). */
    NetRequest isend(MemorySegment data, int tag, NetRequest pendingRecv) throws NetException {
        long deadline = System.nanoTime() + DEADLINE_NS;
        int[] ignored = new int[64];
        while (true) {
            NetRequest r = net.isend(send, data, tag, srcHandle);
            if (r != null) {
                return r;
            }
            if (pendingRecv != null && net.test(pendingRecv, ignored)) {
                fail("a receive completed before its send was posted");
            }
            if (System.nanoTime() > deadline) {
                fail("isend never accepted");
            }
        }
    }

    /**
     * Tests every request in turn until all are done (one thread drives both ends, so no request may
     * be waited for alone); the first failure is thrown once all have finished.
     *
     * @return the sizes each request reported
     */
    int[][] waitAll(NetRequest... requests) throws NetException {
        int[][] sizes = new int[requests.length][64];
        boolean[] done = new boolean[requests.length];
        NetException failure = null;
        int remaining = requests.length;
        long deadline = System.nanoTime() + DEADLINE_NS;
        while (remaining > 0) {
            for (int i = 0; i < requests.length; i++) {
                if (done[i]) {
                    continue;
                }
                try {
                    done[i] = net.test(requests[i], sizes[i]);
                } catch (NetException e) {
                    done[i] = true;
                    failure = failure == null ? e : failure;
                }
                remaining -= done[i] ? 1 : 0;
            }
            if (System.nanoTime() > deadline) {
                fail("requests never completed");
            }
        }
        if (failure != null) {
            throw failure;
        }
        return sizes;
    }

    /** @return the failure of {@code request} once it completes, or {@code null} if it succeeds */
    NetException failureOf(NetRequest request) {
        try {
            waitAll(request);
            return null;
        } catch (NetException e) {
            return e;
        }
    }

    @Override
    public void close() throws NetException {
        net.deregMr(send, srcHandle);
        net.deregMr(recv, dstHandle);
        net.closeSend(send);
        net.closeRecv(recv);
        net.closeListen(listen);
        arena.close();
    }
}
