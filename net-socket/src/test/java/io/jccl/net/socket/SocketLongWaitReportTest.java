package io.jccl.net.socket;

import io.jccl.spi.LogLevel;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A request that waits longer than the failure bound while its peer lives is no failure (the peer
 * may be computing), but it is where a hang under a real client starts: the comm says so once, at
 * INFO, with its state. If this fails, check SocketComm.stillPending and SocketSendComm.refused.
 */
class SocketLongWaitReportTest {
    private static final long BOUND_MS = 200;

    /** @return a loopback with a short failure bound whose log lines go to {@code lines} */
    private static Loopback recording(List<String> lines) throws NetException {
        return new Loopback(Map.of(SocketConfig.JCCL_SOCKET_TIMEOUT_MS, String.valueOf(BOUND_MS)),
                (LogLevel level, long subsystems, String message) -> lines.add(level + " " + message));
    }

    @Test
    void aReceiveWaitingPastTheBoundIsReportedOnceWithItsState() throws NetException, InterruptedException {
        List<String> lines = new CopyOnWriteArrayList<>();
        try (Loopback lo = recording(lines)) {
            Loopback.Pair p = lo.pair();
            MemorySegment dst = lo.allocate(4096);
            NetRequest r = lo.recv(p.recv(), dst, 0, lo.register(p.recv(), dst));
            long end = System.currentTimeMillis() + 3 * BOUND_MS;
            while (System.currentTimeMillis() < end) {
                assertFalse(lo.plugin.test(r, null), "nothing was sent");
                Thread.sleep(5);
            }
            List<String> reports = lines.stream().filter(l -> l.contains("has been pending")).toList();
            assertEquals(1, reports.size(), "one report per connection: " + reports);
            String report = reports.get(0);
            assertTrue(report.startsWith("INFO NET/JcclSocket: a receive from "), report);
            assertTrue(report.contains("receive #0 of 1 buffer(s): 0 DATA/EAGER frame(s) in"), report);
            assertTrue(lines.stream().noneMatch(l -> l.startsWith("WARN")), "a wait is no failure: " + lines);
            // the sender comes late: the receive completes as usual
            MemorySegment src = lo.allocate(100);
            NetRequest s = lo.send(p.send(), src, 0, lo.register(p.send(), src));
            assertEquals(100, lo.awaitAll(s, r)[1][0]);
        }
    }

    @Test
    void anIsendRefusedPastTheBoundIsReportedOnce() throws NetException, InterruptedException {
        List<String> lines = new CopyOnWriteArrayList<>();
        try (Loopback lo = recording(lines)) {
            Loopback.Pair p = lo.pair();
            // larger than an EAGER slot, and no receive was ever posted: no CTS, nothing to go ahead of
            MemorySegment src = lo.allocate(1 << 20);
            MemoryHandle sm = lo.register(p.send(), src);
            long end = System.currentTimeMillis() + 3 * BOUND_MS;
            while (System.currentTimeMillis() < end) {
                assertNull(lo.plugin.isend(p.send(), src, 0, sm), "no receive is posted");
                Thread.sleep(5);
            }
            List<String> reports = lines.stream().filter(l -> l.contains("found no receive to send into")).toList();
            assertEquals(1, reports.size(), "one report per connection: " + reports);
            assertTrue(reports.get(0).startsWith("INFO NET/JcclSocket: isend of 1048576 bytes to "), reports.get(0));
            assertTrue(reports.get(0).contains("CTS in hand 0"), reports.get(0));
            MemorySegment dst = lo.allocate(1 << 20);
            NetRequest r = lo.recv(p.recv(), dst, 0, lo.register(p.recv(), dst));
            NetRequest s = lo.send(p.send(), src, 0, sm);
            assertEquals(1 << 20, lo.awaitAll(s, r)[1][0]);
        }
    }
}
