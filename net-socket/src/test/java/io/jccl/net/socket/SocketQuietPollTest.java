package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Polls of requests whose bytes are with the I/O threads make no syscall ({@link SocketComm#pollStreams}):
 * under NCCL one proxy thread polls every connection, and a read of the control stream per poll
 * (a microsecond or more each) was most of its time. Messages still arrive intact and in order,
 * with NCCL's pattern: the receiver posts each receive as the previous one completes, the sender
 * sends as fast as it may. If the counts fail, check {@code SocketRecvComm.onlyStreamsOwe} and
 * the send side's test; if the data fails, a skipped read left a frame unparsed.
 */
class SocketQuietPollTest {
    private static final int MESSAGES = 24;
    private static final int BUFFER = 1 << 20;

    @ParameterizedTest(name = "threads x streams = {0}")
    @CsvSource({"2x2, true", "1x1, true", "0x1, false"})
    void pollsOfBytesWithTheIoThreadsMakeNoSyscallAndLoseNothing(String layout, boolean quiet) throws NetException {
        String[] tp = layout.split("x");
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, tp[0],
                SocketConfig.NCCL_NSOCKS_PERTHREAD, tp[1]))) {
            Loopback.Pair p = lo.pair();
            MemorySegment src = lo.allocate((long) MESSAGES * BUFFER);
            MemorySegment dst = lo.allocate((long) MESSAGES * BUFFER);
            Loopback.fillPattern(src, 11);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            NetRequest[] sends = new NetRequest[MESSAGES];
            NetRequest[] recvs = new NetRequest[MESSAGES];
            int sent = 0;
            int posted = 0;
            int received = 0;
            int sendsDone = 0;
            long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
            while (received < MESSAGES || sendsDone < MESSAGES) {
                // The receiver keeps two receives posted, as NCCL's proxy posts a few steps ahead.
                if (posted < MESSAGES && posted - received < 2) {
                    recvs[posted] = lo.recv(p.recv(), dst.asSlice((long) posted * BUFFER, BUFFER), 1, rm);
                    posted++;
                }
                if (sent < MESSAGES && sent - sendsDone < 4) {
                    NetRequest s = lo.plugin.isend(p.send(), src.asSlice((long) sent * BUFFER, BUFFER), 1, sm);
                    if (s != null) {
                        sends[sent++] = s;
                    }
                }
                if (sendsDone < sent && lo.plugin.test(sends[sendsDone], null)) {
                    sendsDone++;
                }
                int[] sizes = new int[1];
                if (received < posted && lo.plugin.test(recvs[received], sizes)) {
                    assertEquals(BUFFER, sizes[0], "message " + received);
                    received++;
                }
                assertTrue(System.currentTimeMillis() < deadline, "no progress within the deadline: " + received
                        + " received, " + sendsDone + " sent");
            }
            assertEquals(-1, src.mismatch(dst), "every message intact, in order");
            long sendQuiet = ((SocketComm) p.send()).quietPolls;
            long recvQuiet = ((SocketComm) p.recv()).quietPolls;
            if (quiet) {
                assertTrue(sendQuiet > 0, "send polls left to the I/O threads: " + sendQuiet);
                assertTrue(recvQuiet > 0, "receive polls left to the I/O threads: " + recvQuiet);
            } else {
                assertEquals(0, sendQuiet + recvQuiet, "without I/O threads the caller moves the bytes: every poll works");
            }
        }
    }
}
