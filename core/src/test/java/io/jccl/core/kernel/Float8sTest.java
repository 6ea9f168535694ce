package io.jccl.core.kernel;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The 8-bit float formats against values fixed by their definition (cuda_fp8.h, OCP FP8). */
class Float8sTest {

    @Test
    void everyE4M3AndE5M2ValueRoundTripsAndNaNIsCanonical() {
        for (int v = 0; v < 256; v++) {
            byte b = (byte) v;
            float e4 = Float8s.fromE4M3(b);
            float e5 = Float8s.fromE5M2(b);
            if (Float.isNaN(e4)) {
                assertTrue((v & 0x7f) == 0x7f, "e4m3 NaN only at S.1111.111, not 0x" + Integer.toHexString(v));
                assertEquals(0x7f, Float8s.toE4M3(e4));
            } else {
                assertEquals(b, Float8s.toE4M3(e4), "e4m3 0x" + Integer.toHexString(v) + " = " + e4);
            }
            if (Float.isNaN(e5)) {
                assertEquals(0x7f, Float8s.toE5M2(e5));
            } else if (Float.isInfinite(e5)) {
                assertEquals((byte) (v & 0x80 | 0x7b), Float8s.toE5M2(e5), "infinity saturates to the largest finite");
            } else {
                assertEquals(b, Float8s.toE5M2(e5), "e5m2 0x" + Integer.toHexString(v) + " = " + e5);
            }
        }
    }

    @Test
    void knownValuesRoundToNearestEvenAndSaturate() {
        assertEquals(1.0f, Float8s.fromE4M3((byte) 0x38));
        assertEquals(448f, Float8s.fromE4M3((byte) 0x7e));
        assertEquals(0x1p-9f, Float8s.fromE4M3((byte) 0x01)); // smallest subnormal
        assertEquals(1.0f, Float8s.fromE5M2((byte) 0x3c));
        assertEquals(57344f, Float8s.fromE5M2((byte) 0x7b));
        assertEquals(Float.POSITIVE_INFINITY, Float8s.fromE5M2((byte) 0x7c));
        assertEquals((byte) 0x7e, Float8s.toE4M3(1e6f));
        assertEquals((byte) 0xfe, Float8s.toE4M3(-1e6f));
        assertEquals((byte) 0x7b, Float8s.toE5M2(Float.POSITIVE_INFINITY));
        // 1.0625 lies halfway between 1.0 (0x38) and 1.125 (0x39): to even, 0x38; 1.1875 to 0x3a
        assertEquals((byte) 0x38, Float8s.toE4M3(1.0625f));
        assertEquals((byte) 0x3a, Float8s.toE4M3(1.1875f));
        assertEquals((byte) 0x80, Float8s.toE4M3(-0.0f));
        assertEquals((byte) 0x00, Float8s.toE4M3(0x1p-11f)); // below half the smallest subnormal
    }
}
