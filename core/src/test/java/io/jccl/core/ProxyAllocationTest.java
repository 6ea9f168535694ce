package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The proxy's data path allocates nothing per message, and a closed communicator refuses work. */
class ProxyAllocationTest {

    @Test
    void theProxyThreadAllocatesNothingPerMessage() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        // 1 KiB slots: a 64 KiB all-reduce is 64 messages each way per rank; 300 of them are ~20,000 messages.
        try (LocalRanks ranks = new LocalRanks(2, CommConfig.builder().channels(1).bufferSize(8 << 10)
                .timeout(Duration.ofSeconds(30)).build())) {
            long count = 16 << 10;
            List<MemorySegment> buffers = List.of(Arena.ofAuto().allocate(count * 4), Arena.ofAuto().allocate(count * 4));
            Runnable ops = () -> ranks.each((rank, c) -> {
                for (int i = 0; i < 150; i++) {
                    c.allReduce(buffers.get(rank), buffers.get(rank), count, DataType.FLOAT32, ReduceOp.MAX);
                }
            });
            ops.run();
            Thread proxy = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("jccl-proxy-r0"))
                    .findFirst().orElseThrow();
            long before = threads.getThreadAllocatedBytes(proxy.threadId());
            ops.run();
            ops.run();
            long allocated = threads.getThreadAllocatedBytes(proxy.threadId()) - before;
            assertTrue(allocated < 64 << 10, "the proxy thread allocated " + allocated + " bytes for about 40,000 "
                    + "messages; the data path must allocate nothing per message");
        }
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
