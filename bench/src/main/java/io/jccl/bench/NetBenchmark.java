package io.jccl.bench;

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

/**
 * One connection of any transport, driven through the SPI as NCCL's proxy drives it: the sender
 * and the receiver each on their own thread (as two proxies would be), each keeping {@code depth}
 * requests in flight and testing the oldest.
 */
public final class NetBenchmark implements AutoCloseable {
    private final NetPlugin net;
    private final Arena arena = Arena.ofShared();
    private final ListenComm listenA;
    private final ListenComm listenB;
    /** A sends to B on {@code ab}; B answers on {@code ba} (ping-pong only). */
    private final SendComm abSend;
    private final RecvComm abRecv;
    private final SendComm baSend;
    private final RecvComm baRecv;

    /** @param net an initialised transport; device 0 is used */
    public NetBenchmark(NetPlugin net) throws NetException {
        this.net = net;
        NetHandle ha = NetHandle.allocate();
        NetHandle hb = NetHandle.allocate();
        listenB = net.listen(0, hb);
        listenA = net.listen(0, ha);
        SendComm s1 = null;
        SendComm s2 = null;
        RecvComm r1 = null;
        RecvComm r2 = null;
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (s1 == null || s2 == null || r1 == null || r2 == null) {
            if (s1 == null) {
                s1 = net.connect(0, hb);
            }
            if (s2 == null) {
                s2 = net.connect(0, ha);
            }
            if (r1 == null) {
                r1 = net.accept(listenB);
            }
            if (r2 == null) {
                r2 = net.accept(listenA);
            }
            if (System.nanoTime() > deadline) {
                throw NetException.systemError(net.name() + " did not connect within 30 s");
            }
        }
        abSend = s1;
        abRecv = r1;
        baSend = s2;
        baRecv = r2;
    }

    /**
     * @return GB/s of {@code messages} messages of {@code size} bytes from A to B, {@code depth} in flight
     */
    public double throughputGBps(long size, int depth, long messages) throws Exception {
        MemorySegment src = arena.allocate(Math.max(1, size * depth), 4096);
        MemorySegment dst = arena.allocate(Math.max(1, size * depth), 4096);
        MemoryHandle sm = net.regMr(abSend, src, PointerType.HOST);
        MemoryHandle rm = net.regMr(abRecv, dst, PointerType.HOST);
        Throwable[] failure = new Throwable[1];
        long t0 = System.nanoTime();
        Thread sender = Measure.start("bench-sender", () -> {
            NetRequest[] ring = new NetRequest[depth];
            int[] sizes = new int[1];
            long posted = 0;
            long done = 0;
            while (done < messages) {
                if (posted < messages && posted - done < depth) {
                    int slot = (int) (posted % depth);
                    NetRequest r = net.isend(abSend, src.asSlice(slot * size, size), 0, sm);
                    if (r != null) {
                        ring[slot] = r;
                        posted++;
                    }
                }
                if (done < posted && net.test(ring[(int) (done % depth)], sizes)) {
                    done++;
                }
            }
        }, failure);
        Thread receiver = Measure.start("bench-receiver", () -> {
            NetRequest[] ring = new NetRequest[depth];
            MemorySegment[] buffer = new MemorySegment[1];
            int[] tags = {0};
            MemoryHandle[] mhs = {rm};
            int[] sizes = new int[8];
            long posted = 0;
            long done = 0;
            while (done < messages) {
                if (posted < messages && posted - done < depth) {
                    int slot = (int) (posted % depth);
                    buffer[0] = dst.asSlice(slot * size, size);
                    NetRequest r = net.irecv(abRecv, 1, buffer, tags, mhs);
                    if (r != null) {
                        ring[slot] = r;
                        posted++;
                    }
                }
                if (done < posted && net.test(ring[(int) (done % depth)], sizes)) {
                    if (sizes[0] != size) {
                        throw new IllegalStateException("received " + sizes[0] + " bytes, expected " + size);
                    }
                    done++;
                }
            }
        }, failure);
        Measure.join(failure, sender, receiver);
        long nanos = System.nanoTime() - t0;
        net.deregMr(abSend, sm);
        net.deregMr(abRecv, rm);
        return Measure.gbPerSecond(size * messages, nanos);
    }

    /** @return the median one-way latency (half a round trip) in microseconds of {@code size}-byte ping-pongs */
    public double pingPongMicros(int size, int iterations, int warmup) throws Exception {
        MemorySegment a = arena.allocate(2L * size, 64);
        MemorySegment b = arena.allocate(2L * size, 64);
        MemoryHandle aSend = net.regMr(abSend, a, PointerType.HOST);
        MemoryHandle aRecv = net.regMr(baRecv, a, PointerType.HOST);
        MemoryHandle bRecv = net.regMr(abRecv, b, PointerType.HOST);
        MemoryHandle bSend = net.regMr(baSend, b, PointerType.HOST);
        int total = iterations + warmup;
        long[] rtt = new long[iterations];
        Throwable[] failure = new Throwable[1];
        Thread echo = Measure.start("bench-echo", () -> {
            Endpoint e = new Endpoint(baSend, abRecv, b.asSlice(0, size), b.asSlice(size, size), bSend, bRecv);
            e.postReceive();
            for (int i = 0; i < total; i++) {
                e.awaitReceive();
                if (i + 1 < total) {
                    e.postReceive();
                }
                e.send();
            }
            e.awaitSends();
        }, failure);
        Endpoint e = new Endpoint(abSend, baRecv, a.asSlice(0, size), a.asSlice(size, size), aSend, aRecv);
        e.postReceive();
        for (int i = 0; i < total; i++) {
            long t0 = System.nanoTime();
            e.send();
            e.awaitReceive();
            if (i >= warmup) {
                rtt[i - warmup] = System.nanoTime() - t0;
            }
            if (i + 1 < total) {
                // none left posted at the end: the next ping-pong on these comms may use another size
                e.postReceive();
            }
        }
        e.awaitSends();
        Measure.join(failure, echo);
        return Measure.median(rtt) / 2e3;
    }

    /**
     * The transport's own cost of a small message, without a second thread: one thread posts a
     * receive, sends into it and tests both until done, {@code iterations} times, as a single
     * polling thread (NCCL's proxy) does for a connection to itself. No scheduler is involved, so
     * this is the CPU time of the calls: their syscalls and the transport's code.
     *
     * @return mean nanoseconds per message
     */
    public double oneThreadNanos(int size, int iterations, int warmup) throws Exception {
        MemorySegment src = arena.allocate(Math.max(1, size), 64);
        MemorySegment dst = arena.allocate(Math.max(1, size), 64);
        MemoryHandle sm = net.regMr(abSend, src, PointerType.HOST);
        MemoryHandle rm = net.regMr(abRecv, dst, PointerType.HOST);
        MemorySegment[] buffer = {dst};
        int[] tags = {0};
        MemoryHandle[] mhs = {rm};
        int[] sizes = new int[8];
        long t0 = 0;
        for (int i = 0; i < iterations + warmup; i++) {
            if (i == warmup) {
                t0 = System.nanoTime();
            }
            NetRequest r = net.irecv(abRecv, 1, buffer, tags, mhs);
            NetRequest s;
            while ((s = net.isend(abSend, src, 0, sm)) == null) {
                Thread.onSpinWait();
            }
            boolean sent = false;
            boolean received = false;
            while (!sent || !received) {
                sent = sent || net.test(s, sizes);
                received = received || net.test(r, sizes);
            }
        }
        double nanos = (System.nanoTime() - t0) / (double) iterations;
        net.deregMr(abSend, sm);
        net.deregMr(abRecv, rm);
        return nanos;
    }

    /** One side of a ping-pong: one receive posted ahead, sends tested to completion lazily. */
    private final class Endpoint {
        private final SendComm send;
        private final RecvComm recv;
        private final MemorySegment[] in;
        private final MemorySegment out;
        private final MemoryHandle sendMh;
        private final MemoryHandle[] recvMh;
        private final int[] tags = {0};
        private final int[] sizes = new int[8];
        private NetRequest pendingRecv;
        private NetRequest pendingSend;

        Endpoint(SendComm send, RecvComm recv, MemorySegment out, MemorySegment in, MemoryHandle sendMh,
                 MemoryHandle recvMh) {
            this.send = send;
            this.recv = recv;
            this.out = out;
            this.in = new MemorySegment[] {in};
            this.sendMh = sendMh;
            this.recvMh = new MemoryHandle[] {recvMh};
        }

        void postReceive() throws NetException {
            while ((pendingRecv = net.irecv(recv, 1, in, tags, recvMh)) == null) {
                Thread.onSpinWait();
            }
        }

        void awaitReceive() throws NetException {
            while (!net.test(pendingRecv, sizes)) {
                if (pendingSend != null && net.test(pendingSend, null)) {
                    pendingSend = null;
                }
            }
        }

        void send() throws NetException {
            awaitSends();
            while ((pendingSend = net.isend(send, out, 0, sendMh)) == null) {
                Thread.onSpinWait();
            }
        }

        void awaitSends() throws NetException {
            while (pendingSend != null && !net.test(pendingSend, null)) {
                Thread.onSpinWait();
            }
            pendingSend = null;
        }
    }

    @Override
    public void close() throws NetException {
        net.closeSend(abSend);
        net.closeSend(baSend);
        net.closeRecv(abRecv);
        net.closeRecv(baRecv);
        net.closeListen(listenA);
        net.closeListen(listenB);
        arena.close();
    }
}
