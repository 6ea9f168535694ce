package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The bound on the I/O threads of all of a process's comms (JCCL_SOCKET_IO_THREADS). */
class SocketIoThreadBudgetTest {

    @Test
    void eachCommGetsAFairShareAndAtLeastOneThread() {
        IoThreadBudget b = new IoThreadBudget(4);
        assertEquals(4, b.reserve(4));
        assertEquals(2, b.reserve(4));
        assertEquals(1, b.reserve(4));
        assertEquals(1, b.reserve(4), "a comm's streams need a thread even past the bound");
        assertEquals(1, b.reserve(1), "never more than the layout asks for");
        for (int i = 0; i < 5; i++) {
            b.release();
        }
        assertEquals(3, b.reserve(3), "closed comms give their share back");
        IoThreadBudget none = new IoThreadBudget(0);
        for (int i = 0; i < 8; i++) {
            assertEquals(4, none.reserve(4), "0: no bound");
        }
    }

    @Test
    void theBoundFollowsTheLayoutSettingAndCanBeSet() {
        assertEquals(4, SocketConfig.ioThreadLimit(true, 16), "auto layout: a quarter of the usable cores");
        assertEquals(1, SocketConfig.ioThreadLimit(true, 2));
        assertEquals(0, SocketConfig.ioThreadLimit(false, 16), "NCCL_SOCKET_NTHREADS set: its count per comm holds");
        System.setProperty(SocketConfig.JCCL_SOCKET_IO_THREADS, "6");
        try {
            assertEquals(6, SocketConfig.ioThreadLimit(false, 16));
            System.setProperty(SocketConfig.JCCL_SOCKET_IO_THREADS, "-1");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> SocketConfig.ioThreadLimit(true, 16));
            assertTrue(e.getMessage().contains(SocketConfig.JCCL_SOCKET_IO_THREADS), e.getMessage());
        } finally {
            System.clearProperty(SocketConfig.JCCL_SOCKET_IO_THREADS);
        }
    }

    @Test
    void boundedCommsStartFewerThreadsAndStillMoveEveryByte() throws NetException {
        Map<String, String> layout = Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, "4",
                SocketConfig.JCCL_SOCKET_IO_THREADS, "4");
        int before = ioThreads();
        try (Loopback lo = new Loopback(layout)) {
            Loopback.Pair a = lo.pair();
            Loopback.Pair b = lo.pair();
            // 4 comms of 4 streams each: 4 + 2 + 1 + 1 threads instead of 16.
            assertEquals(8, ioThreads() - before, "I/O threads of 4 comms under a bound of 4");
            for (Loopback.Pair p : new Loopback.Pair[] {a, b}) {
                int bytes = 3 << 20;
                MemorySegment src = lo.allocate(bytes);
                MemorySegment dst = lo.allocate(bytes);
                Loopback.fillPattern(src, 7);
                MemoryHandle sm = lo.register(p.send(), src);
                MemoryHandle rm = lo.register(p.recv(), dst);
                NetRequest r = lo.recv(p.recv(), dst, 0, rm);
                NetRequest s = lo.send(p.send(), src, 0, sm);
                assertEquals(bytes, lo.awaitAll(s, r)[1][0]);
                assertEquals(Loopback.checksum(src, bytes), Loopback.checksum(dst, bytes));
            }
        }
    }

    private static int ioThreads() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith("jccl-socket-")) {
                n++;
            }
        }
        return n;
    }
}
