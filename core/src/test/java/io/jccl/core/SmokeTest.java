package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SmokeTest {
    @Test
    void allReduceOnTwoRanks() {
        try (LocalRanks ranks = new LocalRanks(2)) {
            ranks.each((rank, comm) -> {
                int n = 1000;
                MemorySegment in = Arena.ofAuto().allocate(n * 4L);
                MemorySegment out = Arena.ofAuto().allocate(n * 4L);
                for (int i = 0; i < n; i++) {
                    in.setAtIndex(ValueLayout.JAVA_FLOAT, i, i + rank);
                }
                comm.allReduce(in, out, n, DataType.FLOAT32, ReduceOp.SUM);
                for (int i = 0; i < n; i++) {
                    assertEquals(2 * i + 1, out.getAtIndex(ValueLayout.JAVA_FLOAT, i), "element " + i);
                }
            });
        }
    }
}
