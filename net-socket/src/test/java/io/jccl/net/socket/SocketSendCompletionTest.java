package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A send that {@code test} reported complete reaches the receiver even if its caller never calls
 * the send comm again, as NCCL's proxy does once a connection's last send is done (and the kit's
 * xfer.12 does at the end of each link). If this fails, a send completed while its frame still
 * waited in the control stream's staging for a later call to write it.
 */
class SocketSendCompletionTest {
    private static final int MESSAGE = 60 << 10;

    @Test
    void sendsReportedCompleteReachTheReceiverWithoutAnotherCallOnTheSendComm() throws NetException {
        // No I/O threads: everything goes on the control stream, small kernel buffers so that it fills.
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, "0",
                SocketConfig.NCCL_SOCKET_SNDBUF, "65536", SocketConfig.NCCL_SOCKET_RCVBUF, "65536"))) {
            Loopback.Pair p = lo.pair();
            int count = io.jccl.spi.NetPlugin.MAX_REQUESTS;
            MemorySegment src = lo.allocate((long) count * MESSAGE);
            MemorySegment dst = lo.allocate((long) count * MESSAGE);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            List<NetRequest> recvs = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                recvs.add(lo.recv(p.recv(), dst.asSlice((long) i * MESSAGE, MESSAGE), 1, rm));
            }
            // Sends until the control stream is full (isend would block with bytes staged), each tested
            // once; the receiver is not called meanwhile.
            List<NetRequest> sends = new ArrayList<>();
            List<Boolean> sendDone = new ArrayList<>();
            long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
            while (sends.size() < count && System.currentTimeMillis() < deadline) {
                int i = sends.size();
                MemorySegment m = src.asSlice((long) i * MESSAGE, MESSAGE);
                m.fill((byte) (i + 1));
                NetRequest s = lo.plugin.isend(p.send(), m, 1, sm);
                if (s == null) {
                    if (i > 0 && ((SocketSendComm) p.send()).out.busy()) {
                        break;
                    }
                    continue; // no CTS in hand yet
                }
                sends.add(s);
                sendDone.add(lo.plugin.test(s, new int[1]));
            }
            int sent = sends.size();
            assertTrue(sent > 0 && sent < count && ((SocketSendComm) p.send()).out.busy(),
                    "the control stream filled before all sends were posted: " + sent);

            // From now on the caller polls only what is not done yet: the sends not reported complete
            // and the receives. A send reported complete is never called again.
            boolean[] got = new boolean[sent];
            int done = 0;
            deadline = System.currentTimeMillis() + 5_000;
            while (done < sent) {
                for (int i = 0; i < sent; i++) {
                    if (!sendDone.get(i)) {
                        sendDone.set(i, lo.plugin.test(sends.get(i), new int[1]));
                    }
                }
                for (int i = 0; i < sent; i++) {
                    int[] size = new int[1];
                    if (!got[i] && lo.plugin.test(recvs.get(i), size)) {
                        got[i] = true;
                        done++;
                        assertEquals(MESSAGE, size[0]);
                        assertEquals((byte) (i + 1), dst.get(ValueLayout.JAVA_BYTE, (long) i * MESSAGE + MESSAGE - 1));
                    }
                }
                if (System.currentTimeMillis() > deadline) {
                    fail((sent - done) + " of " + sent + " receives never completed; sends reported complete: "
                            + sendDone + ": a send completed while its bytes still waited in the sender's staging");
                }
            }
        }
    }
}
