package io.jccl.core.kernel;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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

    /**
     * Every type and operation, through the fused native loop (a destination on its element
     * boundary) and through blocks (one off it): the wrapped kernel's bytes, but for which NaN a
     * floating-point sum or product gives.
     */
    @ParameterizedTest(name = "fused loops of width {0} (1 AVX2, 2 AVX-512)")
    @ValueSource(ints = {1, 2})
    void everyTypeAndOperationGivesTheWrappedKernelsBytes(int width) {
        assumeAvailable();
        assumeTrue(width <= StreamingStoreKernel.WIDEST, () -> "this CPU runs the fused loops at width "
                + StreamingStoreKernel.WIDEST + " at most (2: AVX-512 F, BW and DQ; 1: AVX2)");
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
                    // 8: past a line boundary, the head and tail go to the wrapped kernel; 1: off the element boundary
                    for (long offset : type.size() == 1 ? new long[] {8} : new long[] {8, 1}) {
                        Counting counting = new Counting(inner);
                        ReductionKernel kernel = new StreamingStoreKernel(counting, FROM, width);
                        long count = bytes / type.size();
                        inner.reduce(type, op, a, 0, b, 0, expected, offset, count);
                        kernel.reduce(type, op, a, 0, b, 0, actual, offset, count);
                        assertSameValues(type, op, expected.asSlice(offset, bytes), actual.asSlice(offset, bytes),
                                type + " " + op + " at offset " + offset);
                        boolean sixteenBit = type == DataType.FLOAT16 || type == DataType.BFLOAT16;
                        if (offset == 1 || sixteenBit) { // blocks, none straight into the destination
                            assertEquals(4, counting.targets.size(), type + " " + op + ": blocks of the wrapped kernel");
                            for (MemorySegment target : counting.targets) {
                                assertNotEquals(actual.address(), target.address(), "a block went straight into the destination");
                            }
                        } else { // the fused loop: only the head and the tail in the wrapped kernel
                            assertEquals(2, counting.targets.size(), type + " " + op + ": head and tail");
                        }
                    }
                    checked++;
                }
            }
            assertTrue(checked >= 20, "only " + checked + " (type, op) pairs supported");
        }
    }

    /** Byte for byte, but a NaN of a floating-point sum or product need only be a NaN (Java leaves its payload open). */
    private static void assertSameValues(DataType type, ReduceOp op, MemorySegment expected, MemorySegment actual,
                                         String where) {
        boolean nanFree = !type.isFloatingPoint() || (op != ReduceOp.SUM && op != ReduceOp.PROD);
        if (nanFree) {
            long at = expected.mismatch(actual);
            assertEquals(-1, at, () -> where + String.format(": byte %d expected 0x%02x actual 0x%02x", at,
                    expected.get(ValueLayout.JAVA_BYTE, at), actual.get(ValueLayout.JAVA_BYTE, at)));
            return;
        }
        for (long i = 0; i < expected.byteSize() / type.size(); i++) {
            if (type == DataType.FLOAT16 || type == DataType.BFLOAT16) {
                short e = expected.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i);
                short x = actual.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i);
                int exponent = type == DataType.FLOAT16 ? 0x7c00 : 0x7f80;
                boolean bothNaN = (e & exponent) == exponent && (e & ~exponent & 0x7fff) != 0
                        && (x & exponent) == exponent && (x & ~exponent & 0x7fff) != 0;
                assertTrue(e == x || bothNaN, where + String.format(": element %d expected 0x%04x actual 0x%04x", i, e, x));
            } else if (type == DataType.FLOAT32) {
                float e = expected.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
                float x = actual.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
                assertTrue(Float.floatToRawIntBits(e) == Float.floatToRawIntBits(x) || (Float.isNaN(e) && Float.isNaN(x)),
                        where + ": element " + i + " expected " + e + " actual " + x);
            } else {
                double e = expected.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i);
                double x = actual.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i);
                assertTrue(Double.doubleToRawLongBits(e) == Double.doubleToRawLongBits(x)
                        || (Double.isNaN(e) && Double.isNaN(x)), where + ": element " + i + " expected " + e + " actual " + x);
            }
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

    /** Math.max and Math.min on the values where they differ from a compare: zeros of both signs and NaNs. */
    @Test
    void floatMaxAndMinPickAsMathMaxAndMin() {
        assumeAvailable();
        ReductionKernel kernel = new StreamingStoreKernel(HostReductionKernel.INSTANCE, FROM);
        float[] special = {0f, -0f, Float.NaN, Float.intBitsToFloat(0x7fc12345), Float.intBitsToFloat(0xffa00001),
                1f, -1f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.MIN_VALUE, -Float.MIN_VALUE};
        int count = (int) (2 * FROM / 4);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(4L * count, 64);
            MemorySegment b = arena.allocate(4L * count, 64);
            MemorySegment d = arena.allocate(4L * count, 64);
            for (int i = 0; i < count; i++) {
                a.setAtIndex(ValueLayout.JAVA_FLOAT, i, special[i % special.length]);
                b.setAtIndex(ValueLayout.JAVA_FLOAT, i, special[(i / special.length) % special.length]);
            }
            for (ReduceOp op : new ReduceOp[] {ReduceOp.MAX, ReduceOp.MIN}) {
                kernel.reduce(DataType.FLOAT32, op, a, 0, b, 0, d, 0, count);
                for (int i = 0; i < count; i++) {
                    float x = a.getAtIndex(ValueLayout.JAVA_FLOAT, i);
                    float y = b.getAtIndex(ValueLayout.JAVA_FLOAT, i);
                    float want = op == ReduceOp.MAX ? Math.max(x, y) : Math.min(x, y);
                    assertEquals(Float.floatToRawIntBits(want), Float.floatToRawIntBits(d.getAtIndex(ValueLayout.JAVA_FLOAT, i)),
                            op + "(" + x + ", " + y + ")");
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

    /** By default the engine's host kernel streams from 8 MiB where the library runs, and says so. */
    @Test
    void hostKernelsStreamByDefault() {
        assumeAvailable();
        assumeTrue(System.getenv("JCCL_HOST_STREAM_STORES") == null, "JCCL_HOST_STREAM_STORES is set in this environment");
        assertTrue(HostKernels.best() instanceof StreamingStoreKernel streaming
                && streaming.minBytes() == StreamingStoreKernel.DEFAULT_MIN_BYTES, HostKernels.describe());
        assertTrue(HostKernels.describe().contains("streaming stores from " + StreamingStoreKernel.DEFAULT_MIN_BYTES),
                HostKernels.describe());
    }

    @Test
    void theSettingParsesSizesAndRefusesTheRest() {
        assertEquals(StreamingStoreKernel.DEFAULT_MIN_BYTES, HostKernels.streamFrom("auto"));
        assertEquals(0, HostKernels.streamFrom("off"));
        assertEquals(0, HostKernels.streamFrom("0"));
        assertEquals(4L << 20, HostKernels.streamFrom("4m"));
        assertEquals(1L << 30, HostKernels.streamFrom("1g"));
        assertEquals(8L << 20, HostKernels.streamFrom("8mib"));
        assertEquals(65536, HostKernels.streamFrom("65536"));
        assertEquals(-1, HostKernels.streamFrom("4k"), "below one block");
        assertEquals(-1, HostKernels.streamFrom("lots"));
        assertEquals(-1, HostKernels.streamFrom("-1m"));
        assertEquals(-1, HostKernels.streamFrom("99999999999g"));
    }
}
