package io.jccl.core.kernel;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Reductions into large destinations, block by block through the thread's buffer and streamed out:
 * the same bytes as the wrapped kernel gives in one call, for every type and operation, in place
 * and at odd offsets; small and heap destinations untouched by the blocks; bad calls write nothing.
 */
class StreamingStoreKernelTest {
    private static final long FROM = StreamingStoreKernel.BLOCK_BYTES;
    private static final ReduceOp[] OPS = {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN};

    private static void assumeAvailable() {
        assumeTrue(StreamingStoreKernel.isAvailable(), () -> "streaming stores: " + StreamingStoreKernel.unavailabilityCause());
    }

    /** The wrapped kernel, counting the reductions it is asked for and those into the caller's destination. */
    private static final class Counting implements ReductionKernel {
        final ReductionKernel inner;
        final List<MemorySegment> targets = new ArrayList<>();

        Counting(ReductionKernel inner) {
            this.inner = inner;
        }

        @Override
        public boolean supports(DataType type, ReduceOp op) {
            return inner.supports(type, op);
        }

        @Override
        public void reduce(DataType type, ReduceOp op, MemorySegment a, long aOffset, MemorySegment b, long bOffset,
                           MemorySegment dst, long dstOffset, long count) {
            targets.add(dst);
            inner.reduce(type, op, a, aOffset, b, bOffset, dst, dstOffset, count);
        }

        @Override
        public void divide(DataType type, MemorySegment buf, long offset, long count, int divisor) {
            inner.divide(type, buf, offset, count, divisor);
        }

        @Override
        public void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
            inner.copy(src, srcOffset, dst, dstOffset, bytes);
        }
    }

    private static void fill(MemorySegment s, long seed) {
        Random random = new Random(seed);
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
    }

    @Test
    void everyTypeAndOperationGivesTheWrappedKernelsBytes() {
        assumeAvailable();
        ReductionKernel inner = HostKernels.inJava();
        long bytes = 3 * FROM + 200; // three whole blocks and a part, a multiple of every type's size
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(bytes + 64, 64);
            MemorySegment b = arena.allocate(bytes + 64, 64);
            MemorySegment expected = arena.allocate(bytes + 64, 64);
            MemorySegment actual = arena.allocate(bytes + 64, 64);
            fill(a, 1);
            fill(b, 2);
            int checked = 0;
            for (DataType type : DataType.values()) {
                for (ReduceOp op : OPS) {
                    if (!inner.supports(type, op)) {
                        continue;
                    }
                    Counting counting = new Counting(inner);
                    ReductionKernel kernel = new StreamingStoreKernel(counting, FROM);
                    long count = bytes / type.size();
                    // a destination 8 bytes past a line boundary: the copy's head and tail take ordinary stores
                    inner.reduce(type, op, a, 0, b, 0, expected, 8, count);
                    kernel.reduce(type, op, a, 0, b, 0, actual, 8, count);
                    assertEquals(-1, expected.asSlice(8, bytes).mismatch(actual.asSlice(8, bytes)), type + " " + op);
                    assertEquals(4, counting.targets.size(), type + " " + op + ": reductions of the wrapped kernel");
                    for (MemorySegment target : counting.targets) {
                        assertNotEquals(actual.address(), target.address(), "a block went straight into the destination");
                    }
                    checked++;
                }
            }
            assertTrue(checked >= 20, "only " + checked + " (type, op) pairs supported");
        }
    }

    /** Wrapping the native 16-bit kernel: its own streaming loop, or the blocks where it declines; the same bytes either way. */
    @Test
    void theNativeSixteenBitKernelStreamsFromItsOwnLoop() {
        assumeAvailable();
        HalfFloatKernel.Level level = HalfFloatKernel.best();
        assumeTrue(level != null, () -> "native 16-bit float kernel: "
                + HalfFloatKernel.unavailabilityCause(HalfFloatKernel.Level.AVX2));
        ReductionKernel half = new HalfFloatKernel(HostReductionKernel.INSTANCE, level);
        ReductionKernel kernel = new StreamingStoreKernel(half, FROM);
        long count = 3 * FROM / 2 + 21;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(2 * count, 64);
            MemorySegment b = arena.allocate(2 * count, 64);
            MemorySegment expected = arena.allocate(2 * count + 64, 64);
            MemorySegment actual = arena.allocate(2 * count + 64, 64);
            fill(a, 6);
            fill(b, 7);
            for (DataType type : new DataType[] {DataType.FLOAT16, DataType.BFLOAT16}) {
                for (ReduceOp op : new ReduceOp[] {ReduceOp.MAX, ReduceOp.MIN}) { // no NaN payloads to differ
                    for (long offset : new long[] {0, 6, 1}) { // 1: odd, declined by the native loop, so blocks
                        half.reduce(type, op, a, 0, b, 0, expected, offset, count);
                        kernel.reduce(type, op, a, 0, b, 0, actual, offset, count);
                        assertEquals(-1, expected.asSlice(offset, 2 * count).mismatch(actual.asSlice(offset, 2 * count)),
                                type + " " + op + " at offset " + offset);
                    }
                }
            }
        }
    }

    @Test
    void inPlaceReadsEachBlockBeforeWritingIt() {
        assumeAvailable();
        ReductionKernel inner = HostKernels.inJava();
        ReductionKernel kernel = new StreamingStoreKernel(inner, FROM);
        long count = 5 * FROM / 4 + 3;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(count * 4, 64);
            MemorySegment b = arena.allocate(count * 4, 64);
            MemorySegment expected = arena.allocate(count * 4, 64);
            fill(a, 3);
            fill(b, 4);
            inner.reduce(DataType.INT32, ReduceOp.SUM, a, 0, b, 0, expected, 0, count);
            kernel.reduce(DataType.INT32, ReduceOp.SUM, a, 0, b, 0, a, 0, count);
            assertEquals(-1, expected.mismatch(a));
        }
    }

    @Test
    void smallAndHeapDestinationsGoStraightToTheWrappedKernel() {
        assumeAvailable();
        Counting counting = new Counting(HostKernels.inJava());
        ReductionKernel kernel = new StreamingStoreKernel(counting, 2 * FROM);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(4 * FROM, 64);
            MemorySegment small = arena.allocate(2 * FROM - 4, 64);
            kernel.reduce(DataType.FLOAT32, ReduceOp.SUM, a, 0, a, 0, small, 0, small.byteSize() / 4);
            MemorySegment heap = MemorySegment.ofArray(new float[(int) FROM]);
            kernel.reduce(DataType.FLOAT32, ReduceOp.SUM, a, 0, a, 0, heap, 0, FROM);
            assertEquals(List.of(small, heap), counting.targets);
        }
    }

    /** Misuse at the API edge: a clear exception, and nothing written. */
    @Test
    void outOfBoundsAndReadOnlyTargetsFailWithoutWriting() {
        assumeAvailable();
        ReductionKernel kernel = new StreamingStoreKernel(HostKernels.inJava(), FROM);
        long count = 2 * FROM / 4;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(count * 4, 64);
            MemorySegment shortInput = arena.allocate(count * 4 - 4, 64);
            MemorySegment d = arena.allocate(count * 4, 64);
            fill(a, 5);
            assertThrows(IndexOutOfBoundsException.class,
                    () -> kernel.reduce(DataType.FLOAT32, ReduceOp.SUM, a, 0, shortInput, 0, d, 0, count));
            assertThrows(IndexOutOfBoundsException.class,
                    () -> kernel.reduce(DataType.FLOAT32, ReduceOp.SUM, a, 0, a, 0, d, 4, count));
            assertEquals(-1, d.mismatch(arena.allocate(count * 4)), "an out-of-bounds call wrote");
            assertThrows(IllegalArgumentException.class,
                    () -> kernel.reduce(DataType.FLOAT32, ReduceOp.SUM, a, 0, a, 0, d.asReadOnly(), 0, count));
        }
        assertThrows(IllegalArgumentException.class, () -> new StreamingStoreKernel(HostKernels.inJava(), FROM - 1));
    }

    /** The data path allocates nothing per call once compiled (the thread's buffer is allocated once). */
    @Test
    void reducingAllocatesNothing() {
        assumeAvailable();
        ReductionKernel kernel = new StreamingStoreKernel(HostKernels.inJava(), FROM);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(2 * FROM, 64);
            MemorySegment d = arena.allocate(2 * FROM, 64);
            for (int i = 0; i < 20_000; i++) { // compile
                kernel.reduce(DataType.FLOAT32, ReduceOp.SUM, a, 0, a, 0, d, 0, 2 * FROM / 4);
            }
            long id = Thread.currentThread().threadId();
            long before = threads.getThreadAllocatedBytes(id);
            for (int i = 0; i < 10_000; i++) {
                kernel.reduce(DataType.FLOAT32, ReduceOp.SUM, a, 0, a, 0, d, 0, 2 * FROM / 4);
            }
            assertEquals(0, (threads.getThreadAllocatedBytes(id) - before) / 10_000, "bytes allocated per call");
        }
    }

    @Test
    void theSettingParsesSizesAndRefusesTheRest() {
        assertEquals(StreamingStoreKernel.DEFAULT_MIN_BYTES, HostKernels.streamFrom("auto"));
        assertEquals(0, HostKernels.streamFrom("off"));
        assertEquals(0, HostKernels.streamFrom("0"));
        assertEquals(4L << 20, HostKernels.streamFrom("4m"));
        assertEquals(1L << 30, HostKernels.streamFrom("1g"));
        assertEquals(65536, HostKernels.streamFrom("65536"));
        assertEquals(-1, HostKernels.streamFrom("4k"), "below one block");
        assertEquals(-1, HostKernels.streamFrom("lots"));
        assertEquals(-1, HostKernels.streamFrom("-1m"));
        assertEquals(-1, HostKernels.streamFrom("99999999999g"));
    }
}
