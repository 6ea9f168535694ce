package io.jccl.core.collective;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * How a ring step's chunk is cut into messages: a ring with a network hop sends fewer, larger
 * slices than one over shared memory. If this fails, check OperationBuilder's MIN_SLICE_BYTES and
 * NET_MIN_SLICE_BYTES against the figures in their comments and in bench/mpi/README.md.
 */
class RingSliceTest {
    private static final int FLOAT = 4;
    private static final long ALIGN = 16;
    /** 512 KiB slots (the 4 MiB default buffer over 8 steps), in floats. */
    private static final long SLOT = (512 << 10) / FLOAT;

    @Test
    void aMebibyteAllReduceOfTwoRanksIsOneMessagePerStepOverTheNetworkAndFourOverSharedMemory() {
        long chunk = (512 << 10) / FLOAT; // 1 MiB over 2 ranks
        assertEquals(chunk, OperationBuilder.sliceElements(SLOT, chunk, FLOAT, ALIGN, true));
        assertEquals(chunk / 4, OperationBuilder.sliceElements(SLOT, chunk, FLOAT, ALIGN, false));
    }

    @Test
    void largeChunksAreCutIntoSlotsEitherWay() {
        long chunk = 4 * SLOT;
        assertEquals(SLOT, OperationBuilder.sliceElements(SLOT, chunk, FLOAT, ALIGN, true));
        assertEquals(SLOT, OperationBuilder.sliceElements(SLOT, chunk, FLOAT, ALIGN, false));
    }

    @Test
    void noSliceIsLargerThanASlot() {
        long smallSlot = (64 << 10) / FLOAT;
        assertEquals(smallSlot, OperationBuilder.sliceElements(smallSlot, 4 * smallSlot, FLOAT, ALIGN, true));
    }
}
