package io.jccl.core.collective;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The chunks of a CollNet call: enough of them for the pipeline, none larger than a stage slot. */
class CollNetTaskTest {
    @Test
    void largeCallsTakeWholeSlotsAndSmallOnesEightChunksDownToTheMinimum() {
        int slot = 512 << 10;
        assertEquals(slot, CollNetTask.chunkBytes(64L << 20, slot, 4));
        assertEquals(slot, CollNetTask.chunkBytes(4L << 20, slot, 4));
        assertEquals(128 << 10, CollNetTask.chunkBytes(1L << 20, slot, 4));
        assertEquals(CollNetTask.MIN_CHUNK_BYTES, CollNetTask.chunkBytes(64 << 10, slot, 4));
        assertEquals(CollNetTask.MIN_CHUNK_BYTES, CollNetTask.chunkBytes(8, slot, 8));
        // Small slots (tests' 8 KiB) cap the chunk; 8-byte elements stay whole.
        assertEquals(8 << 10, CollNetTask.chunkBytes(1L << 20, 8 << 10, 8));
        assertEquals(0, CollNetTask.chunkBytes((1L << 20) + 8, slot, 8) % 8);
    }
}
