package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The data path allocates nothing per message, and a closed communicator refuses work. */
class ProxyAllocationTest {
    /** Measured windows of {@code 2 x calls} calls; the test passes once one allocates nothing per message. */
    private static final int WINDOWS = 5;

    /**
     * The duty cycle runs on the proxy thread and on callers waiting for their operation, so the
     * test counts what both allocate. 1 KiB slots make a 1 MiB all-reduce 1,024 messages each
     * way per rank; 30 calls are ~60,000 messages per rank. What a call itself allocates (its
     * operation and tasks, a few hundred bytes) stays far below one allocation per message.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(DataPath.class)
    void theDataPathAllocatesNothingPerMessage(DataPath path) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (LocalRanks ranks = new LocalRanks(2, path.config().channels(1).bufferSize(8 << 10)
                .timeout(Duration.ofSeconds(30)).build())) {
            long count = 256 << 10;
            int calls = 30;
            List<MemorySegment> buffers = List.of(Arena.ofAuto().allocate(count * 4), Arena.ofAuto().allocate(count * 4));
            Set<Long> callers = ConcurrentHashMap.newKeySet();
            Runnable ops = () -> ranks.each((rank, c) -> {
                callers.add(Thread.currentThread().threadId());
                for (int i = 0; i < calls; i++) {
                    c.allReduce(buffers.get(rank), buffers.get(rank), count, DataType.FLOAT32, ReduceOp.MAX);
                }
            });
            ops.run();
            ops.run();
            List<Long> ids = new ArrayList<>(callers);
            Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("jccl-proxy-r"))
                    .forEach(t -> ids.add(t.threadId()));
            // Until C2 has compiled the reduction kernel its Vector API code boxes every vector (about
            // 1.5 KB per 1 KiB message): in a JVM busy with other tests' compilations that can take
            // longer than two rounds. A real per-message allocation shows in every window.
            long allocated = 0;
            long perCall = Long.MAX_VALUE;
            for (int window = 0; window < WINDOWS && perCall >= 4096; window++) {
                long before = allocated(threads, ids);
                ops.run();
                allocated = allocated(threads, ids) - before;
                perCall = allocated / (2L * calls);
            }
            assertTrue(perCall < 4096, "the threads that run the duty cycle allocated " + allocated + " bytes for "
                    + 2 * calls + " calls of ~1,000 messages each (" + perCall + " per call) in each of " + WINDOWS
                    + " windows; the data path must allocate nothing per message");
        }
    }

    private static long allocated(com.sun.management.ThreadMXBean threads, List<Long> ids) {
        long sum = 0;
        for (long id : ids) {
            sum += Math.max(0, threads.getThreadAllocatedBytes(id));
        }
        return sum;
    }

    @Test
    void aClosedCommunicatorRefusesWorkAndClosingTwiceIsHarmless() {
        LocalRanks ranks = new LocalRanks(2);
        ranks.close();
        MemorySegment m = Arena.ofAuto().allocate(4);
        JcclException e = assertThrows(JcclException.class,
                () -> ranks.comms[0].allReduce(m, m, 1, DataType.FLOAT32, ReduceOp.SUM));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        ranks.comms[0].close();
        ranks.comms[1].abort();
    }
}
