package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which ranks use shared memory (NCCL's rules: same host id, NCCL_SHM_DISABLE), and what they leave behind. */
class SharedMemoryTest {

    @Test
    void ranksOfOneHostConnectThroughSharedMemoryAndLeaveNoFiles() throws IOException {
        try (LocalRanks ranks = new LocalRanks(3)) {
            for (Communicator c : ranks.comms) {
                assertEquals("SHM", c.ringTransport(), "rank " + c.rank());
            }
            assertEquals(List.of(), leftovers(), "the senders delete each buffer's file once mapped");
            sumOfRanksIsRight(ranks);
        }
        assertEquals(List.of(), leftovers());
    }

    @Test
    void sharedMemoryDisabledConnectsThroughTheNetwork() {
        try (LocalRanks ranks = new LocalRanks(2, CommConfig.builder().sharedMemory(false)
                .timeout(Duration.ofSeconds(30)).build())) {
            for (Communicator c : ranks.comms) {
                assertEquals(c.transport(), c.ringTransport(), "rank " + c.rank());
            }
            sumOfRanksIsRight(ranks);
        }
    }

    @Test
    void ranksWithDifferentHostIdsConnectThroughTheNetworkAndTheOthersThroughSharedMemory() {
        // Ranks 0 and 1 claim host "a", rank 2 host "b": the ring 0 -> 1 -> 2 -> 0 has one shared-memory edge.
        try (LocalRanks ranks = new LocalRanks(3, 3, UniqueId.create(Duration.ofSeconds(30)),
                rank -> CommConfig.builder().hostId(rank < 2 ? "a" : "b").timeout(Duration.ofSeconds(30)).build())) {
            String net = ranks.comms[0].transport();
            assertEquals("SHM and " + net, ranks.comms[0].ringTransport(), "rank 0 receives from rank 2 by network");
            assertEquals("SHM and " + net, ranks.comms[1].ringTransport(), "rank 1 sends to rank 2 by network");
            assertEquals(net, ranks.comms[2].ringTransport(), "rank 2 shares no host");
            sumOfRanksIsRight(ranks);
        }
    }

    private static void sumOfRanksIsRight(LocalRanks ranks) {
        int n = ranks.n;
        long count = 100_003;
        List<Long> wrong = ranks.run(rank -> {
            MemorySegment m = Arena.ofAuto().allocate(count * 8, 8);
            for (long i = 0; i < count; i++) {
                m.setAtIndex(ValueLayout.JAVA_LONG, i, i * n + rank);
            }
            ranks.comms[rank].allReduce(m, m, count, DataType.INT64, ReduceOp.SUM);
            long bad = 0;
            for (long i = 0; i < count; i++) {
                bad += m.getAtIndex(ValueLayout.JAVA_LONG, i) == i * n * n + (long) n * (n - 1) / 2 ? 0 : 1;
            }
            return bad;
        });
        assertEquals(Collections.nCopies(n, 0L), wrong);
    }

    private static List<Path> leftovers() throws IOException {
        String mine = "jccl-shm-" + ProcessHandle.current().pid() + "-";
        Path dir = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty("java.io.tmpdir"));
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith(mine)).toList();
        }
    }
}
