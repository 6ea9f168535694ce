package io.jccl.core.transport;

import io.jccl.spi.ForwardingNetPlugin;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.RecvComm;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A receiving connection whose slots the transport writes in GPU memory (GPUDirect) flushes each
 * receive with {@code iflush} and hands the slot to the kernel only once the flush completed, as
 * NCCL's proxy does. JcclSocket moves the bytes; a wrapper around it makes each flush a request that
 * completes when the test says so, and records what was flushed.
 */
class NetRecvConnectionFlushTest extends OverJcclSocket {
    /** JcclSocket whose flushes are pending until {@link #release}d, or fail when {@link #failing}. */
    private static final class HeldFlushes extends ForwardingNetPlugin {
        final List<Long> flushedBytes = new ArrayList<>();
        volatile boolean released;
        volatile boolean failing;

        private final class Flush implements NetRequest {
        }

        HeldFlushes(NetPlugin delegate) {
            super(delegate);
        }

        void release() {
            released = true;
        }

        @Override
        public NetRequest iflush(RecvComm comm, int n, MemorySegment[] data, MemoryHandle[] mhandles) throws NetException {
            for (int i = 0; i < n; i++) {
                flushedBytes.add(data[i].byteSize());
            }
            return new Flush();
        }

        @Override
        public boolean test(NetRequest request, int[] sizes) throws NetException {
            if (request instanceof Flush) {
                if (failing) {
                    throw NetException.remoteError("the flush failed (test)", null);
                }
                return released;
            }
            return delegate.test(request, sizes);
        }
    }

    /** One connection from rank 0 to rank 1 over {@code net}, whose receiving end flushes (GPU slots). */
    private static NetConnectionPair flushingPair(NetPlugin net, Arena arena) throws NetException {
        return NetConnectionPair.connect(net, 0, 1, arena.allocate(Connection.STEPS * SLOT, 4096),
                arena.allocate(Connection.STEPS * SLOT, 4096), SLOT, true);
    }

    /** Progresses both ends until {@code done}, at most 10 s. */
    private static void until(NetConnectionPair pair, java.util.function.BooleanSupplier done) throws NetException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!done.getAsBoolean()) {
            pair.send().progress();
            pair.recv().progress();
            assertTrue(System.nanoTime() - deadline < 0, "no progress within 10 s");
        }
    }

    @Test
    void aReceiveIntoGpuSlotsReachesTheKernelOnlyAfterItsFlushCompleted() throws Exception {
        HeldFlushes net = new HeldFlushes(socket);
        try (Arena arena = Arena.ofShared(); NetConnectionPair pair = flushingPair(net, arena)) {
            pair.recv().expect(2);
            pair.send(100);
            until(pair, () -> net.flushedBytes.size() == 1);
            assertEquals(List.of(100L), net.flushedBytes, "the flush covers the bytes received");
            for (int i = 0; i < 1000; i++) {
                pair.recv().progress();
            }
            assertEquals(0, pair.recv().received(), "a slot whose flush is pending is not handed over");
            net.release();
            until(pair, () -> pair.recv().received() == 1);
            assertEquals(100, pair.recv().dataSize());
            pair.recv().consume();
            pair.send(SLOT);
            until(pair, () -> pair.recv().received() == 2);
            assertEquals(List.of(100L, (long) SLOT), net.flushedBytes);
        }
    }

    @Test
    void aFailedFlushFailsTheConnectionInOneLine() throws Exception {
        HeldFlushes net = new HeldFlushes(socket);
        net.failing = true;
        try (Arena arena = Arena.ofShared(); NetConnectionPair pair = flushingPair(net, arena)) {
            pair.recv().expect(1);
            pair.send(64);
            NetException e = assertThrows(NetException.class, () -> until(pair, () -> false));
            assertTrue(e.getMessage().contains("the flush failed") && !e.getMessage().contains("\n"), e.getMessage());
            assertEquals(0, pair.recv().received());
        }
    }
}
