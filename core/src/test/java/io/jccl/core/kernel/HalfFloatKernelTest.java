package io.jccl.core.kernel;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.Random;

import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The native float16 and bfloat16 kernel against the scalar Java kernel, bit for bit (a NaN sum or
 * product need only be a NaN: Java leaves its payload unspecified), at each {@link HalfFloatKernel.Level}
 * of instructions. A level is skipped, with the cause, where the library does not load or the CPU
 * lacks its instructions (this project's CI machine has AVX2 but not AVX-512). If a comparison fails,
 * check {@code src/main/c/half_floats.c}'s rounding (sum, product) or its integer keys (max, min) at
 * the level the test names, for the element the message names.
 */
class HalfFloatKernelTest {
    private static final ReduceOp[] OPS = {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN};
    private static final DataType[] TYPES = {DataType.FLOAT16, DataType.BFLOAT16};
    private final ReductionKernel scalar = HostReductionKernel.INSTANCE;

    private static void assumeAvailable(HalfFloatKernel.Level level) {
        assumeTrue(HalfFloatKernel.isAvailable(level),
                () -> "native 16-bit float kernel at " + level + ": " + HalfFloatKernel.unavailabilityCause(level));
    }

    /** By default the engine takes the highest level the CPU runs, and says which. */
    @Test
    void hostKernelsPickTheHighestLevelWhereItRuns() {
        HalfFloatKernel.Level best = HalfFloatKernel.best();
        assumeTrue(best != null, () -> "native 16-bit float kernel: "
                + HalfFloatKernel.unavailabilityCause(HalfFloatKernel.Level.AVX2));
        assumeTrue(System.getenv("JCCL_HOST_HALF_FLOATS") == null && System.getenv("JCCL_HOST_KERNEL") == null,
                "JCCL_HOST_HALF_FLOATS or JCCL_HOST_KERNEL is set in this environment");
        ReductionKernel host = HostKernels.best() instanceof StreamingStoreKernel streaming ? streaming.inner()
                : HostKernels.best();
        assertTrue(host instanceof HalfFloatKernel half && half.level() == best, HostKernels.describe());
        assertTrue(HostKernels.describe().contains("float16 and bfloat16 native (" + best.instructions + ")"),
                HostKernels.describe());
        for (HalfFloatKernel.Level below : HalfFloatKernel.Level.values()) {
            if (below.ordinal() < best.ordinal()) {
                assertTrue(HalfFloatKernel.isAvailable(below), best + " without " + below + ": "
                        + HalfFloatKernel.unavailabilityCause(below));
            }
        }
    }

    /** A level the CPU lacks is refused at construction with its cause, never run. */
    @Test
    void aLevelTheCpuLacksIsRefusedWithItsCause() {
        for (HalfFloatKernel.Level level : HalfFloatKernel.Level.values()) {
            String cause = HalfFloatKernel.unavailabilityCause(level);
            if (cause != null) {
                IllegalStateException e = assertThrows(IllegalStateException.class,
                        () -> new HalfFloatKernel(HostReductionKernel.INSTANCE, level));
                assertEquals(cause, e.getMessage());
            }
        }
    }

    /**
     * Every 16-bit value, on either side, against partners that reach each rounding and each special
     * case: one, a half, a third, the largest finite, the smallest subnormal and normal, negatives,
     * both zeros, both infinities, a quiet, a signalling and a negative NaN.
     */
    @ParameterizedTest
    @EnumSource(HalfFloatKernel.Level.class)
    void everySixteenBitValueAgainstTheScalarKernel(HalfFloatKernel.Level level) {
        assumeAvailable(level);
        ReductionKernel kernel = new HalfFloatKernel(scalar, level);
        short[] float16Partners = {0x3c00, 0x3800, 0x3555, 0x7bff, 0x0001, 0x0400, (short) 0xbc00, (short) 0x8001,
                0x0000, (short) 0x8000, 0x7c00, (short) 0xfc00, 0x7e00, 0x7d01, (short) 0xfe01};
        short[] bfloat16Partners = {0x3f80, 0x3f00, 0x3eab, 0x7f7f, 0x0001, 0x0080, (short) 0xbf80, (short) 0x8001,
                0x0000, (short) 0x8000, 0x7f80, (short) 0xff80, 0x7fc0, 0x7f81, (short) 0xffc1};
        int n = 1 << 17; // every value beside the partner, then the partner beside every value
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment x = arena.allocate(2L * n, 64);
            MemorySegment y = arena.allocate(2L * n, 64);
            MemorySegment expected = arena.allocate(2L * n, 64);
            MemorySegment actual = arena.allocate(2L * n, 64);
            for (DataType type : TYPES) {
                for (short p : type == DataType.FLOAT16 ? float16Partners : bfloat16Partners) {
                    for (int v = 0; v < 1 << 16; v++) {
                        x.setAtIndex(JAVA_SHORT_UNALIGNED, v, (short) v);
                        y.setAtIndex(JAVA_SHORT_UNALIGNED, v, p);
                        x.setAtIndex(JAVA_SHORT_UNALIGNED, (1 << 16) + v, p);
                        y.setAtIndex(JAVA_SHORT_UNALIGNED, (1 << 16) + v, (short) v);
                    }
                    for (ReduceOp op : OPS) {
                        scalar.reduce(type, op, x, 0, y, 0, expected, 0, n);
                        kernel.reduce(type, op, x, 0, y, 0, actual, 0, n);
                        assertSame16(type, op, x, y, expected, actual, " at " + level + ", partner 0x" + Integer.toHexString(p & 0xffff));
                    }
                }
            }
        }
    }

    /** Counts around the 16-element step (the tail goes to the wrapped kernel), odd offsets, in place. */
    @ParameterizedTest
    @EnumSource(HalfFloatKernel.Level.class)
    void tailsOffsetsAndInPlace(HalfFloatKernel.Level level) {
        assumeAvailable(level);
        ReductionKernel kernel = new HalfFloatKernel(scalar, level);
        Random random = new Random(11);
        try (Arena arena = Arena.ofConfined()) {
            for (DataType type : TYPES) {
                for (ReduceOp op : OPS) {
                    for (int count : new int[] {0, 1, 15, 16, 17, 31, 32, 48, 63, 1000, 4099}) {
                        for (long offset : new long[] {0, 1, 6}) { // bytes: an odd address, and a few elements in
                            long bytes = 2L * count;
                            MemorySegment a = arena.allocate(bytes + 16, 64);
                            MemorySegment b = arena.allocate(bytes + 16, 64);
                            for (long i = 0; i < a.byteSize(); i++) {
                                a.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
                                b.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
                            }
                            MemorySegment expected = arena.allocate(bytes + 16);
                            MemorySegment actual = arena.allocate(bytes + 16);
                            scalar.reduce(type, op, a, offset, b, offset, expected, offset, count);
                            kernel.reduce(type, op, a, offset, b, offset, actual, offset, count);
                            String where = " at " + level + ", count " + count + " offset " + offset;
                            assertSame16(type, op, a.asSlice(offset, bytes), b.asSlice(offset, bytes),
                                    expected.asSlice(offset, bytes), actual.asSlice(offset, bytes), where);
                            assertEquals(-1, actual.asSlice(offset + bytes).mismatch(expected.asSlice(offset + bytes)),
                                    "wrote past the end," + where);
                            MemorySegment before = arena.allocate(bytes + 16);
                            MemorySegment.copy(a, 0, before, 0, a.byteSize());
                            kernel.reduce(type, op, a, offset, b, offset, a, offset, count); // in place
                            assertSame16(type, op, before.asSlice(offset, bytes), b.asSlice(offset, bytes),
                                    expected.asSlice(offset, bytes), a.asSlice(offset, bytes), " in place," + where);
                        }
                    }
                }
            }
        }
    }

    /** Heap segments and the other types reach the wrapped kernel, with the same results. */
    @ParameterizedTest
    @EnumSource(HalfFloatKernel.Level.class)
    void heapSegmentsAndOtherTypesGoToTheWrappedKernel(HalfFloatKernel.Level level) {
        assumeAvailable(level);
        ReductionKernel kernel = new HalfFloatKernel(scalar, level);
        MemorySegment a = MemorySegment.ofArray(new short[64]);
        MemorySegment b = MemorySegment.ofArray(new short[64]);
        for (int i = 0; i < 64; i++) {
            a.setAtIndex(JAVA_SHORT_UNALIGNED, i, HalfFloats.toFloat16(i));
            b.setAtIndex(JAVA_SHORT_UNALIGNED, i, HalfFloats.toFloat16(0.5f));
        }
        MemorySegment d = MemorySegment.ofArray(new short[64]);
        kernel.reduce(DataType.FLOAT16, ReduceOp.SUM, a, 0, b, 0, d, 0, 64);
        for (int i = 0; i < 64; i++) {
            assertEquals(i + 0.5f, HalfFloats.fromFloat16(d.getAtIndex(JAVA_SHORT_UNALIGNED, i)), "element " + i);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ints = arena.allocate(4L * 32);
            for (int i = 0; i < 32; i++) {
                ints.setAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, i, i);
            }
            kernel.reduce(DataType.INT32, ReduceOp.SUM, ints, 0, ints, 0, ints, 0, 32);
            for (int i = 0; i < 32; i++) {
                assertEquals(2 * i, ints.getAtIndex(java.lang.foreign.ValueLayout.JAVA_INT, i));
            }
        }
    }

    /**
     * Stores past the caches (for large destinations) give the ordinary stores' bits: an unaligned
     * head, the streamed lines and a tail, every type and operation; a destination off a 2-byte
     * boundary or too short to stream is declined, and nothing is written.
     */
    @ParameterizedTest
    @EnumSource(HalfFloatKernel.Level.class)
    void streamingStoresGiveTheSameBits(HalfFloatKernel.Level level) {
        assumeAvailable(level);
        HalfFloatKernel kernel = new HalfFloatKernel(scalar, level);
        int n = 4096 + 37;
        Random random = new Random(7);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment x = arena.allocate(2L * n, 64);
            MemorySegment y = arena.allocate(2L * n, 64);
            MemorySegment expected = arena.allocate(2L * n + 64, 64);
            MemorySegment actual = arena.allocate(2L * n + 64, 64);
            for (int i = 0; i < n; i++) {
                x.setAtIndex(JAVA_SHORT_UNALIGNED, i, (short) random.nextInt());
                y.setAtIndex(JAVA_SHORT_UNALIGNED, i, (short) random.nextInt());
            }
            for (DataType type : TYPES) {
                for (ReduceOp op : OPS) {
                    for (long offset : new long[] {0, 2, 62}) {
                        kernel.reduce(type, op, x, 0, y, 0, expected, offset, n);
                        assertTrue(kernel.reduceStreaming(type, op, x, 0, y, 0, actual, offset, n), type + " " + op);
                        assertSame16(type, op, x, y, expected.asSlice(offset, 2L * n), actual.asSlice(offset, 2L * n),
                                " streamed at offset " + offset + ", " + level);
                    }
                }
            }
            MemorySegment untouched = arena.allocate(2L * n + 64, 64);
            assertTrue(!kernel.reduceStreaming(DataType.FLOAT16, ReduceOp.SUM, x, 0, y, 0, untouched, 1, n - 1),
                    "an odd destination address streamed");
            assertTrue(!kernel.reduceStreaming(DataType.FLOAT16, ReduceOp.SUM, x, 0, y, 0, untouched, 2, 64),
                    "a destination of less than two lines past its head streamed");
            assertTrue(!kernel.reduceStreaming(DataType.FLOAT32, ReduceOp.SUM, x, 0, y, 0, untouched, 0, n / 2),
                    "float32 streamed by the 16-bit kernel");
            assertEquals(-1, untouched.mismatch(arena.allocate(2L * n + 64)), "a declined call wrote");
        }
    }

    /** Misuse at the API edge: a clear exception, and nothing written. */
    @ParameterizedTest
    @EnumSource(HalfFloatKernel.Level.class)
    void outOfBoundsAndReadOnlyTargetsFailWithoutWriting(HalfFloatKernel.Level level) {
        assumeAvailable(level);
        ReductionKernel kernel = new HalfFloatKernel(scalar, level);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(64);
            MemorySegment d = arena.allocate(64);
            assertThrows(IndexOutOfBoundsException.class,
                    () -> kernel.reduce(DataType.FLOAT16, ReduceOp.SUM, a, 0, a, 0, d, 32, 32));
            assertEquals(-1, d.mismatch(arena.allocate(64)), "an out-of-bounds call wrote");
            assertThrows(IllegalArgumentException.class,
                    () -> kernel.reduce(DataType.BFLOAT16, ReduceOp.MAX, a, 0, a, 0, d.asReadOnly(), 0, 32));
            Arena closed = Arena.ofConfined();
            MemorySegment gone = closed.allocate(64);
            closed.close();
            assertThrows(IllegalStateException.class,
                    () -> kernel.reduce(DataType.FLOAT16, ReduceOp.SUM, gone, 0, a, 0, d, 0, 32));
        }
    }

    /** The data path allocates nothing per call once compiled (the slices are scalar-replaced). */
    @ParameterizedTest
    @EnumSource(HalfFloatKernel.Level.class)
    void reducingAllocatesNothing(HalfFloatKernel.Level level) {
        assumeAvailable(level);
        ReductionKernel kernel = new HalfFloatKernel(scalar, level);
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(4096, 64);
            MemorySegment d = arena.allocate(4096, 64);
            for (int i = 0; i < 200_000; i++) { // compile
                kernel.reduce(DataType.FLOAT16, ReduceOp.SUM, a, 0, a, 0, d, 0, 2048);
                kernel.reduce(DataType.BFLOAT16, ReduceOp.SUM, a, 0, a, 0, d, 0, 2048);
            }
            long id = Thread.currentThread().threadId();
            long before = threads.getThreadAllocatedBytes(id);
            for (int i = 0; i < 100_000; i++) {
                kernel.reduce(DataType.FLOAT16, ReduceOp.SUM, a, 0, a, 0, d, 0, 2048);
                kernel.reduce(DataType.BFLOAT16, ReduceOp.SUM, a, 0, a, 0, d, 0, 2048);
            }
            long perCall = (threads.getThreadAllocatedBytes(id) - before) / 100_000;
            assertEquals(0, perCall, "bytes allocated per pair of calls at " + level);
        }
    }

    private static void assertSame16(DataType type, ReduceOp op, MemorySegment x, MemorySegment y,
                                     MemorySegment expected, MemorySegment actual, String where) {
        long n = expected.byteSize() / 2;
        for (long i = 0; i < n; i++) {
            short e = expected.getAtIndex(JAVA_SHORT_UNALIGNED, i);
            short a = actual.getAtIndex(JAVA_SHORT_UNALIGNED, i);
            boolean arithmetic = op == ReduceOp.SUM || op == ReduceOp.PROD;
            if (e != a && !(arithmetic && isNaN16(type, e) && isNaN16(type, a))) {
                throw new AssertionError(String.format("%s %s%s: element %d: x 0x%04x y 0x%04x expected 0x%04x actual 0x%04x",
                        type, op, where, i, x.getAtIndex(JAVA_SHORT_UNALIGNED, i), y.getAtIndex(JAVA_SHORT_UNALIGNED, i),
                        e, a));
            }
        }
    }

    private static boolean isNaN16(DataType type, short v) {
        return type == DataType.FLOAT16 ? (v & 0x7c00) == 0x7c00 && (v & 0x03ff) != 0
                : (v & 0x7f80) == 0x7f80 && (v & 0x007f) != 0;
    }
}
