package io.jccl.core.kernel;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The host kernel's arithmetic: C's wrapping integers, unsigned comparisons, correctly rounded 16-bit floats. */
class HostReductionKernelTest {
    final ReductionKernel k = MemoryKind.HOST.kernel();
    final Arena arena = Arena.ofAuto();

    MemorySegment bytes(int... values) {
        MemorySegment m = arena.allocate(values.length);
        for (int i = 0; i < values.length; i++) {
            m.set(ValueLayout.JAVA_BYTE, i, (byte) values[i]);
        }
        return m;
    }

    @Test
    void integersWrapAsInCAndUnsignedTypesCompareUnsigned() {
        MemorySegment a = bytes(100, 200, 0x80, 1);
        MemorySegment b = bytes(100, 100, 0x7f, 2);
        MemorySegment d = arena.allocate(4);
        k.reduce(DataType.INT8, ReduceOp.SUM, a, 0, b, 0, d, 0, 4);
        assertEquals((byte) 200, d.get(ValueLayout.JAVA_BYTE, 0), "100 + 100 wraps to -56");
        k.reduce(DataType.INT8, ReduceOp.MAX, a, 0, b, 0, d, 0, 4);
        assertEquals((byte) 0x7f, d.get(ValueLayout.JAVA_BYTE, 2), "signed: 127 > -128");
        k.reduce(DataType.UINT8, ReduceOp.MAX, a, 0, b, 0, d, 0, 4);
        assertEquals((byte) 0x80, d.get(ValueLayout.JAVA_BYTE, 2), "unsigned: 128 > 127");
        assertEquals((byte) 200, d.get(ValueLayout.JAVA_BYTE, 1), "unsigned: 200 > 100");
        MemorySegment x = arena.allocate(8);
        MemorySegment y = arena.allocate(8);
        x.set(ValueLayout.JAVA_LONG, 0, -1L);
        y.set(ValueLayout.JAVA_LONG, 0, 5L);
        k.reduce(DataType.UINT64, ReduceOp.MIN, x, 0, y, 0, x, 0, 1);
        assertEquals(5L, x.get(ValueLayout.JAVA_LONG, 0), "unsigned: 5 < 2^64 - 1");
        MemorySegment i = arena.allocate(4);
        i.set(ValueLayout.JAVA_INT, 0, -7);
        k.divide(DataType.INT32, i, 0, 1, 2);
        assertEquals(-3, i.get(ValueLayout.JAVA_INT, 0), "integer averages truncate toward zero, as C");
        i.set(ValueLayout.JAVA_INT, 0, -2);
        k.divide(DataType.UINT32, i, 0, 1, 2);
        assertEquals(0x7fffffff, i.get(ValueLayout.JAVA_INT, 0), "unsigned division");
    }

    @Test
    void halfPrecisionResultsAreCorrectlyRounded() {
        MemorySegment a = arena.allocate(2);
        MemorySegment b = arena.allocate(2);
        MemorySegment d = arena.allocate(2);
        a.set(ValueLayout.JAVA_SHORT, 0, Float.floatToFloat16(2048f));
        b.set(ValueLayout.JAVA_SHORT, 0, Float.floatToFloat16(1f));
        k.reduce(DataType.FLOAT16, ReduceOp.SUM, a, 0, b, 0, d, 0, 1);
        assertEquals(2048f, Float.float16ToFloat(d.get(ValueLayout.JAVA_SHORT, 0)), "2048 + 1 ties to even in fp16");
        b.set(ValueLayout.JAVA_SHORT, 0, Float.floatToFloat16(3f));
        k.reduce(DataType.FLOAT16, ReduceOp.SUM, a, 0, b, 0, d, 0, 1);
        assertEquals(2052f, Float.float16ToFloat(d.get(ValueLayout.JAVA_SHORT, 0)), "2048 + 3 rounds to 2052");
        a.set(ValueLayout.JAVA_SHORT, 0, HalfFloats.toBfloat16(256f));
        b.set(ValueLayout.JAVA_SHORT, 0, HalfFloats.toBfloat16(1f));
        k.reduce(DataType.BFLOAT16, ReduceOp.SUM, a, 0, b, 0, d, 0, 1);
        assertEquals(256f, HalfFloats.fromBfloat16(d.get(ValueLayout.JAVA_SHORT, 0)), "256 + 1 ties to even in bf16");
        b.set(ValueLayout.JAVA_SHORT, 0, HalfFloats.toBfloat16(3f));
        k.reduce(DataType.BFLOAT16, ReduceOp.PROD, a, 0, b, 0, d, 0, 1);
        assertEquals(768f, HalfFloats.fromBfloat16(d.get(ValueLayout.JAVA_SHORT, 0)));
        k.divide(DataType.BFLOAT16, d, 0, 1, 3);
        assertEquals(256f, HalfFloats.fromBfloat16(d.get(ValueLayout.JAVA_SHORT, 0)));
    }

    @Test
    void bfloat16ConversionRoundsToNearestEvenAndKeepsNaN() {
        assertEquals((short) 0x3f80, HalfFloats.toBfloat16(1.0f));
        assertEquals((short) 0x3f80, HalfFloats.toBfloat16(Float.intBitsToFloat(0x3f808000)), "a tie rounds to even");
        assertEquals((short) 0x3f82, HalfFloats.toBfloat16(Float.intBitsToFloat(0x3f818000)), "a tie rounds to even");
        assertEquals((short) 0x3f81, HalfFloats.toBfloat16(Float.intBitsToFloat(0x3f808001)), "above the tie rounds up");
        assertTrue(Float.isNaN(HalfFloats.fromBfloat16(HalfFloats.toBfloat16(Float.NaN))));
        assertEquals(Float.POSITIVE_INFINITY, HalfFloats.fromBfloat16(HalfFloats.toBfloat16(Float.MAX_VALUE)));
    }

    @Test
    void eightBitFloatsHaveNoHostArithmeticButMoveAsBytes() {
        assertFalse(k.supports(DataType.FLOAT8_E4M3, ReduceOp.SUM));
        assertTrue(k.supports(DataType.BFLOAT16, ReduceOp.MIN));
    }

    @Test
    void largeBuffersAreReducedInBlocks() {
        long n = (1 << 26) + 5;
        MemorySegment a = arena.allocate(n);
        MemorySegment b = arena.allocate(n);
        a.fill((byte) 1);
        b.fill((byte) 2);
        k.reduce(DataType.UINT8, ReduceOp.SUM, a, 0, b, 0, a, 0, n);
        assertEquals(3, a.get(ValueLayout.JAVA_BYTE, n - 1));
        assertEquals(3, a.get(ValueLayout.JAVA_BYTE, 1 << 26));
    }
}
