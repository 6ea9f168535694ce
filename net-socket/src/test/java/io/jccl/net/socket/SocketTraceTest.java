package io.jccl.net.socket;

import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code JCCL_SOCKET_TRACE}: each comm writes its requests' and chunks' times at close, on one clock
 * with its peer, so that trace_timeline.py can line two ranks up. If the counts fail, check the
 * hooks in isend, irecv and the two test()s ({@link CommTrace#posted}, {@link CommTrace#done}); if
 * the order of times fails, check {@link DataStream#progress}'s started and ended stamps.
 */
class SocketTraceTest {
    private static final int MESSAGES = 12;
    private static final int BYTES = 1 << 20;

    @Test
    void eachCommWritesItsRequestsAndChunksAtCloseOnTheClockOfItsPeer(@TempDir Path dir) throws NetException, IOException {
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, "1",
                SocketConfig.NCCL_NSOCKS_PERTHREAD, "2"))) {
            Loopback.Wired w;
            System.setProperty(CommTrace.JCCL_SOCKET_TRACE, dir.toString());
            try {
                w = new Loopback.Wired(lo, BYTES);
            } finally {
                System.clearProperty(CommTrace.JCCL_SOCKET_TRACE);
            }
            for (int i = 0; i < MESSAGES; i++) {
                NetRequest r = lo.recv(w.pair.recv(), w.dst, 0, w.rm);
                NetRequest s = lo.send(w.pair.send(), w.src, 0, w.sm);
                lo.awaitAll(s, r);
            }
        } // closes the comms: each writes its file

        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.sorted().toList();
        }
        assertEquals(2, files.size(), "one file per comm: " + files);
        List<String> recv = Files.readAllLines(files.get(0));
        List<String> send = Files.readAllLines(files.get(1));
        assertTrue(recv.get(0).startsWith("# comm\trecv\t"), recv.get(0));
        assertTrue(send.get(0).startsWith("# comm\tsend\t"), send.get(0));
        String[] sh = send.get(0).split("\t");
        String[] rh = recv.get(0).split("\t");
        assertEquals(sh[3], rh[4], "the sender's local address is the receiver's remote one");
        assertEquals(sh[4], rh[3], "the sender's remote address is the receiver's local one");

        List<long[]> sendRequests = rows(send, "R");
        List<long[]> recvRequests = rows(recv, "R");
        assertEquals(MESSAGES, sendRequests.size());
        assertEquals(MESSAGES, recvRequests.size());
        for (long[] r : sendRequests) {
            assertTrue(r[1] <= r[2], "a send is done after it was posted: " + r[1] + " " + r[2]);
        }
        // A 1 MiB message over 2 streams: one 512 KiB chunk on each.
        List<long[]> sendChunks = rows(send, "C");
        List<long[]> recvChunks = rows(recv, "C");
        assertEquals(2 * MESSAGES, sendChunks.size());
        assertEquals(2 * MESSAGES, recvChunks.size());
        for (int i = 0; i < sendChunks.size(); i++) {
            long[] c = sendChunks.get(i);
            long[] d = recvChunks.get(i);
            assertEquals(BYTES / 2, c[2]);
            assertEquals(c[0], d[0], "the same stream");
            assertTrue(c[3] <= c[4] && c[4] <= c[5], "queued, started, ended in order: " + List.of(c[3], c[4], c[5]));
            assertTrue(d[3] <= d[4] && d[4] <= d[5], "queued, started, ended in order: " + List.of(d[3], d[4], d[5]));
            assertTrue(d[5] >= c[4], "a chunk's last byte arrives after its sender started it");
        }
        for (int i = 0; i < MESSAGES; i++) {
            // Stream 0's chunks first, then stream 1's.
            long lastByte = Math.max(recvChunks.get(i)[5], recvChunks.get(MESSAGES + i)[5]);
            assertTrue(recvRequests.get(i)[2] >= lastByte, "a receive is reported done after its last byte");
        }
    }

    /** @return the numeric fields after the kind of each row of {@code kind} */
    private static List<long[]> rows(List<String> lines, String kind) {
        return lines.stream().filter(l -> l.startsWith(kind + "\t")).map(l -> {
            String[] f = l.split("\t");
            long[] v = new long[f.length - 1];
            for (int i = 1; i < f.length; i++) {
                v[i - 1] = Long.parseLong(f[i]);
            }
            return v;
        }).toList();
    }
}
