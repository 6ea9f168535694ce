package io.jccl.core;

import io.jccl.core.check.CollectiveKind;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** JCCL's JFR events, recorded in this JVM: life cycle, every collective with its size and algorithm, set-up. */
class FlightRecorderEventsTest {
    @Test
    void aRecordingSeesInitEveryCollectiveWithItsAlgorithmConnectionsAndClose(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("jccl.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("io.jccl.Collective");
            recording.enable("io.jccl.Communicator");
            recording.enable("io.jccl.ConnectionSetup");
            recording.start();
            try (LocalRanks ranks = new LocalRanks(3, CommConfig.builder().timeout(Duration.ofSeconds(30)).build())) {
                ranks.run(rank -> {
                    Communicator c = ranks.comms[rank];
                    MemorySegment buf = Arena.ofAuto().allocate(4L << 20, 64);
                    c.allReduce(buf, buf, 2, DataType.FLOAT32, ReduceOp.SUM);
                    c.allReduce(buf, buf, 1 << 20, DataType.FLOAT32, ReduceOp.SUM);
                    int next = (rank + 1) % 3;
                    int prev = (rank + 2) % 3;
                    Completion received;
                    try (Group g = Group.start()) {
                        c.sendAsync(buf, 1000, DataType.INT8, next);
                        received = c.recvAsync(buf.asSlice(4096), 1000, DataType.INT8, prev);
                    }
                    received.await();
                    c.allReduce(buf, buf, 1000, DataType.FLOAT32, ReduceOp.SUM);
                    return null;
                });
                // what jccl perf prints per row, for the large call
                assertEquals(ranks.comms[0].algorithmFor(CollectiveKind.ALL_REDUCE, 4L << 20), "Ring");
            }
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        List<RecordedEvent> collectives = events.stream().filter(e -> e.getEventType().getName()
                .equals("io.jccl.Collective")).toList();
        // 3 ranks x (small all-reduce, large all-reduce, group, small all-reduce), and the LL board's set-up
        List<String> rank0 = collectives.stream().filter(e -> e.getInt("rank") == 0)
                .map(e -> e.getString("operation") + "/" + e.getLong("bytes") + "/" + e.getString("algorithm"))
                .collect(Collectors.toList());
        assertTrue(rank0.contains("allReduce/8/LL"), rank0.toString());
        assertTrue(rank0.contains("allReduce/4194304/Ring"), rank0.toString());
        assertTrue(rank0.contains("group(send, recv)/2000/P2P"), rank0.toString());
        for (RecordedEvent e : collectives) {
            assertEquals(3, e.getInt("nranks"));
            assertFalse(e.getBoolean("failed"), e.toString());
            assertTrue(e.getDuration().toNanos() > 0, e.toString());
        }
        List<String> life = events.stream().filter(e -> e.getEventType().getName().equals("io.jccl.Communicator"))
                .map(e -> e.getString("action") + "/" + e.getInt("rank")).sorted().toList();
        assertEquals(List.of("close/0", "close/1", "close/2", "init/0", "init/1", "init/2"), life);
        RecordedEvent init = events.stream().filter(e -> e.getEventType().getName().equals("io.jccl.Communicator")
                && e.getString("action").equals("init")).findFirst().orElseThrow();
        assertEquals("JcclSocket", init.getString("transport"));
        long setups = events.stream().filter(e -> e.getEventType().getName().equals("io.jccl.ConnectionSetup")).count();
        // rings at init, the group's peers: at least two rounds per rank
        assertTrue(setups >= 6, setups + " connection set-ups");
    }
}
