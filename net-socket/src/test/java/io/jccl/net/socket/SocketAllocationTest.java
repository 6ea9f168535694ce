package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The data path allocates nothing per message: isend, irecv and test in a warm loop leave the
 * thread's allocation counter where it was (a few bytes of slack for JVM bookkeeping).
 */
class SocketAllocationTest {

    @ParameterizedTest(name = "{0}-byte messages, threads x streams = {1}")
    @CsvSource({"8, 0x1", "200000, 0x1", "8, 2x2", "200000, 2x2"})
    void isendIrecvAndTestAllocateNothingPerMessage(int size, String layout) throws NetException {
        String[] tp = layout.split("x");
        // I/O threads that earlier tests of this JVM left running (a comm of a failed peer that
        // ends on its own) are not this loop's: their allocations (an exception each) do not count.
        Set<Long> earlier = ioThreads(Thread.currentThread()).boxed().collect(Collectors.toSet());
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, tp[0],
                SocketConfig.NCCL_NSOCKS_PERTHREAD, tp[1]))) {
            Loopback.Pair p = lo.pair();
            MemorySegment src = lo.allocate(size);
            MemorySegment dst = lo.allocate(size);
            Loop loop = new Loop(lo.plugin, p.send(), p.recv(), src, dst, lo.register(p.send(), src),
                    lo.register(p.recv(), dst));
            loop.run(20_000);
            long[] ids = ioThreads(Thread.currentThread()).filter(id -> !earlier.contains(id)).toArray();
            long before = allocated(ids);
            int messages = 20_000;
            loop.run(messages);
            long perMessage = (allocated(ids) - before) / messages;
            assertTrue(perMessage < 8, perMessage + " bytes allocated per message");
        }
    }

    /** {@code caller} and every JcclSocket I/O thread alive now. */
    private static LongStream ioThreads(Thread caller) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t == caller || t.getName().startsWith("jccl-socket-"))
                .mapToLong(Thread::threadId);
    }

    /** Bytes allocated so far by these threads. */
    private static long allocated(long[] ids) {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long total = 0;
        for (long bytes : mx.getThreadAllocatedBytes(ids)) {
            total += Math.max(0, bytes);
        }
        return total;
    }

    /** One thread posting a receive, sending into it and testing both, with arrays made once. */
    private static final class Loop {
        private final NetPlugin net;
        private final SendComm send;
        private final RecvComm recv;
        private final MemorySegment src;
        private final MemorySegment[] dst;
        private final MemoryHandle sm;
        private final MemoryHandle[] rm;
        private final int[] tags = {0};
        private final int[] sizes = new int[8];

        Loop(NetPlugin net, SendComm send, RecvComm recv, MemorySegment src, MemorySegment dst, MemoryHandle sm,
             MemoryHandle rm) {
            this.net = net;
            this.send = send;
            this.recv = recv;
            this.src = src;
            this.dst = new MemorySegment[] {dst};
            this.sm = sm;
            this.rm = new MemoryHandle[] {rm};
        }

        void run(int messages) throws NetException {
            for (int i = 0; i < messages; i++) {
                NetRequest r = net.irecv(recv, 1, dst, tags, rm);
                NetRequest s;
                while ((s = net.isend(send, src, 0, sm)) == null) {
                    net.test(r, sizes);
                }
                boolean sent = false;
                boolean received = false;
                while (!sent || !received) {
                    sent = sent || net.test(s, sizes);
                    received = received || net.test(r, sizes);
                }
            }
        }
    }
}
