package io.jccl.net.socket;

import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code JCCL_SOCKET_SHARED_IO}: a few threads of the plugin move the data streams of every comm.
 * If these fail, check {@link SharedIoThreads#assign} (which thread a stream gets) and
 * {@link StreamWorker#detach} (a closing comm must wait until no cycle holds its streams).
 */
class SocketSharedIoTest {
    private static final Map<String, String> SHARED = Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, "2",
            SocketConfig.NCCL_NSOCKS_PERTHREAD, "2", SocketConfig.JCCL_SOCKET_SHARED_IO, "3");

    private static Set<String> ioThreadNames() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("jccl-socket-")).collect(Collectors.toSet());
    }

    @Test
    void threeSharedThreadsMoveFourConnectionsAtOnceAndStopWithTheLastOne() throws NetException {
        try (Loopback lo = new Loopback(SHARED)) {
            long bytes = 8L << 20;
            Loopback.Wired[] links = new Loopback.Wired[4];
            for (int i = 0; i < links.length; i++) {
                links[i] = new Loopback.Wired(lo, bytes);
                Loopback.fillPattern(links[i].src, 10 + i);
            }
            NetRequest[] all = new NetRequest[2 * links.length];
            for (int i = 0; i < links.length; i++) {
                all[2 * i] = lo.recv(links[i].pair.recv(), links[i].dst, 0, links[i].rm);
                all[2 * i + 1] = lo.send(links[i].pair.send(), links[i].src, 0, links[i].sm);
            }
            lo.awaitAll(all);
            for (Loopback.Wired w : links) {
                assertEquals(Loopback.checksum(w.src, bytes), Loopback.checksum(w.dst, bytes), "payload");
            }
            Set<String> names = ioThreadNames();
            assertEquals(Set.of("jccl-socket-io-0", "jccl-socket-io-1", "jccl-socket-io-2"),
                    names.stream().filter(n -> n.startsWith("jccl-socket-io-")).collect(Collectors.toSet()),
                    "three shared threads: " + names);
            assertFalse(names.stream().anyMatch(n -> n.startsWith("jccl-socket-send-") || n.startsWith("jccl-socket-recv-")),
                    "no comm starts threads of its own: " + names);
            // 4 send comms of 4 streams: 16 sending streams over 3 threads, 5 or 6 each.
            for (Loopback.Wired w : links) {
                assertTrue(((SocketComm) w.pair.send()).anyIoThreadAlive(), "an open comm is served");
            }
            lo.plugin.closeSend(links[0].pair.send());
            assertFalse(((SocketComm) links[0].pair.send()).anyIoThreadAlive(),
                    "a closed comm's streams are no longer served");
            assertTrue(lo.plugin.sharedIoThreads().running(), "the other comms keep the threads");
        }
        assertFalse(ioThreadNames().stream().anyMatch(n -> n.startsWith("jccl-socket-io-")),
                "the shared threads stop with the last comm: " + ioThreadNames());
    }

    @Test
    void aBrokenConnectionFailsItsOwnRequestsOnlyAndTheOthersGoOn() throws NetException {
        try (Loopback lo = new Loopback(SHARED)) {
            long bytes = 32L << 20;
            Loopback.Wired broken = new Loopback.Wired(lo, bytes);
            Loopback.Wired healthy = new Loopback.Wired(lo, bytes);
            NetRequest half = lo.recv(broken.pair.recv(), broken.dst, 0, broken.rm);
            NetRequest lost = lo.send(broken.pair.send(), broken.src, 0, broken.sm);
            lo.plugin.test(half, null);
            lo.plugin.test(lost, null);
            lo.plugin.closeRecv(broken.pair.recv());
            Loopback.Outcome o = lo.settle(lost)[0];
            assertTrue(o.error() != null, "a send whose receiver closed fails");
            Loopback.fillPattern(healthy.src, 77);
            for (int round = 0; round < 3; round++) {
                MemorySegment dst = healthy.dst;
                dst.fill((byte) 0);
                lo.awaitAll(lo.recv(healthy.pair.recv(), dst, 0, healthy.rm),
                        lo.send(healthy.pair.send(), healthy.src, 0, healthy.sm));
                assertEquals(Loopback.checksum(healthy.src, bytes), Loopback.checksum(dst, bytes),
                        "the other connection, served by the same threads, still moves its bytes");
            }
        }
    }
}
