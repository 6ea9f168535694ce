package io.jccl.tck.internal.collnet;

import io.jccl.spi.DataType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Bit patterns from the OCP FP8, IEEE half and bfloat16 formats, and exact round trips of the kit's values. */
class ElementCodecTest {

    private static int bits(DataType t, double v) {
        MemorySegment s = Arena.ofAuto().allocate(8);
        ElementCodec.put(s, 0, t, v);
        return t.size() == 1 ? Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, 0))
                : Short.toUnsignedInt(s.get(ValueLayout.JAVA_SHORT_UNALIGNED, 0));
    }

    @Test
    void fp8EncodingsMatchTheStandard() {
        assertEquals(0x38, bits(DataType.FLOAT8_E4M3, 1.0));
        assertEquals(0x40, bits(DataType.FLOAT8_E4M3, 2.0));
        assertEquals(0xC0, bits(DataType.FLOAT8_E4M3, -2.0));
        assertEquals(0x58, bits(DataType.FLOAT8_E4M3, 16.0));
        assertEquals(0x7E, bits(DataType.FLOAT8_E4M3, 448.0));
        assertEquals(0x01, bits(DataType.FLOAT8_E4M3, Math.scalb(1.0, -9)));
        assertEquals(0x3C, bits(DataType.FLOAT8_E5M2, 1.0));
        assertEquals(0x4C, bits(DataType.FLOAT8_E5M2, 16.0));
        assertEquals(0xC8, bits(DataType.FLOAT8_E5M2, -8.0));
        assertEquals(0x00, bits(DataType.FLOAT8_E5M2, 0.0));
    }

    @Test
    void halfAndBfloat16EncodingsMatchTheStandard() {
        assertEquals(0x3C00, bits(DataType.FLOAT16, 1.0));
        assertEquals(0xC000, bits(DataType.FLOAT16, -2.0));
        assertEquals(0x3F80, bits(DataType.BFLOAT16, 1.0));
        assertEquals(0x4040, bits(DataType.BFLOAT16, 3.0));
    }

    /** The kit's inputs and results: integers up to 16 (8 for e5m2, whose 2 mantissa bits stop there). */
    @Test
    void theKitsValuesRoundTripInEveryType() {
        MemorySegment s = Arena.ofAuto().allocate(8);
        for (DataType t : DataType.values()) {
            boolean unsigned = t == DataType.UINT8 || t == DataType.UINT32 || t == DataType.UINT64;
            int max = t == DataType.FLOAT8_E5M2 ? 8 : 16;
            for (int v = unsigned ? 0 : -max; v <= max; v++) {
                ElementCodec.put(s, 0, t, v);
                assertEquals(v, ElementCodec.get(s, 0, t), t + " " + v);
            }
        }
    }
}
