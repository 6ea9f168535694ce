package io.jccl.core.kernel;

/**
 * Conversions of the 16-bit floating-point formats. Arithmetic on them goes through float, which is
 * exact enough to round each result correctly: float has more than twice their significand bits
 * plus two (float16: 11, bfloat16: 8), so rounding to float and then to the 16-bit format gives the
 * correctly rounded result of +, x, max and min.
 */
public final class HalfFloats {
    private HalfFloats() {
    }

    /** @return the IEEE binary16 value of {@code bits} */
    public static float fromFloat16(short bits) {
        return Float.float16ToFloat(bits);
    }

    /** @return {@code f} rounded to IEEE binary16, to nearest even */
    public static short toFloat16(float f) {
        return Float.floatToFloat16(f);
    }

    /** @return the bfloat16 value of {@code bits}: the top half of a float */
    public static float fromBfloat16(short bits) {
        return Float.intBitsToFloat((bits & 0xffff) << 16);
    }

    /** @return {@code f} rounded to bfloat16, to nearest even; NaN stays a (quiet) NaN */
    public static short toBfloat16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if ((bits & 0x7fffffff) > 0x7f800000) {
            return (short) ((bits >>> 16) | 0x0040);
        }
        return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
    }
}
