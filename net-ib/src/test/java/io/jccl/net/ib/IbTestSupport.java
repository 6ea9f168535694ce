package io.jccl.net.ib;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import io.jccl.spi.log.DebugLogger;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What the device tests share: the skip when there is no RDMA device, plugins configured through
 * system properties, a connected pair of comms in one process, and loops that drive requests with
 * a deadline (generous: the SoftRoCE VM runs everything 4 to 20 times slower).
 */
final class IbTestSupport {
    static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(120);

    private IbTestSupport() {
    }

    /** Skips the calling test with the reason, where no verbs device is usable. */
    static void assumeRdma() {
        Throwable cause = IbNetPlugin.unavailabilityCause();
        assumeTrue(cause == null, () -> "no RDMA device here: " + cause);
    }

    /**
     * @param settings variable / value pairs, set as system properties while {@code init} reads them
     * @return an initialised plugin
     */
    static IbNetPlugin plugin(String... settings) throws NetException {
        for (int i = 0; i < settings.length; i += 2) {
            System.setProperty(settings[i], settings[i + 1]);
        }
        try {
            IbNetPlugin p = new IbNetPlugin();
            p.init(DebugLogger.fromEnvironment("[test]"));
            return p;
        } finally {
            for (int i = 0; i < settings.length; i += 2) {
                System.clearProperty(settings[i]);
            }
        }
    }

    /** A connected send comm and receive comm on device 0, and the listen comm. */
    record Pair(NetPlugin sender, NetPlugin receiver, SendComm send, RecvComm recv, ListenComm listen,
            NetHandle handle) implements AutoCloseable {
        @Override
        public void close() throws NetException {
            sender.closeSend(send);
            receiver.closeRecv(recv);
            receiver.closeListen(listen);
        }
    }

    static Pair connect(NetPlugin sender, NetPlugin receiver) throws NetException {
        NetHandle handle = NetHandle.allocate();
        ListenComm listen = receiver.listen(0, handle);
        SendComm send = null;
        RecvComm recv = null;
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (send == null || recv == null) {
            if (send == null) {
                send = sender.connect(0, handle);
            }
            if (recv == null) {
                recv = receiver.accept(listen);
            }
            if (System.nanoTime() - deadline > 0) {
                fail("connect/accept did not finish");
            }
            Thread.onSpinWait();
        }
        return new Pair(sender, receiver, send, recv, listen, handle);
    }

    /** Calls {@code isend} until it starts. */
    static NetRequest send(Pair p, MemorySegment data, int tag, MemoryHandle mh) throws NetException {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        NetRequest r;
        while ((r = p.sender().isend(p.send(), data, tag, mh)) == null) {
            if (System.nanoTime() - deadline > 0) {
                fail("isend never started: no clear-to-send from the receiver");
            }
            Thread.onSpinWait();
        }
        return r;
    }

    /** Calls {@code irecv} until it is posted. */
    static NetRequest recv(Pair p, MemorySegment[] data, int[] tags, MemoryHandle[] mh) throws NetException {
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        NetRequest r;
        while ((r = p.receiver().irecv(p.recv(), data.length, data, tags, mh)) == null) {
            if (System.nanoTime() - deadline > 0) {
                fail("irecv never posted");
            }
            Thread.onSpinWait();
        }
        return r;
    }

    /** Tests {@code request} until it is done. @return the sizes it reported */
    static int[] await(NetPlugin plugin, NetRequest request) throws NetException {
        int[] sizes = new int[IbDevice.MAX_RECVS];
        long deadline = System.nanoTime() + DEADLINE_NANOS;
        while (!plugin.test(request, sizes)) {
            if (System.nanoTime() - deadline > 0) {
                fail("request did not complete");
            }
            Thread.onSpinWait();
        }
        return sizes;
    }

    /** Native memory filled with a pattern that depends on {@code seed}. */
    static MemorySegment pattern(Arena arena, long size, int seed) {
        MemorySegment m = arena.allocate(Math.max(size, 8), 64).asSlice(0, size);
        long words = size / 8;
        for (long i = 0; i < words; i++) {
            m.set(java.lang.foreign.ValueLayout.JAVA_LONG, i * 8, (i + 1) * 0x9E3779B97F4A7C15L ^ seed);
        }
        for (long i = words * 8; i < size; i++) {
            m.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return m;
    }

    static MemoryHandle reg(NetPlugin plugin, io.jccl.spi.NetComm comm, MemorySegment m) throws NetException {
        return plugin.regMr(comm, m, PointerType.HOST);
    }

    static NetLogger quiet() {
        return NetLogger.noop();
    }
}
