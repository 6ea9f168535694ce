package io.jccl.core.kernel;

/**
 * The two 8-bit floating-point formats of NCCL ({@code ncclFloat8e4m3}, {@code ncclFloat8e5m2}, as in
 * NVIDIA's {@code cuda_fp8.h}): e4m3 has 4 exponent bits (bias 7), 3 mantissa bits, no infinity and
 * one NaN pattern per sign ({@code S.1111.111}), largest finite 448; e5m2 is IEEE-like with 5
 * exponent bits (bias 15), 2 mantissa bits, infinities and NaNs, largest finite 57344.
 *
 * <p>Conversion from float rounds to nearest even and saturates to the largest finite value (NCCL's
 * {@code __NV_SATFINITE}); NaN becomes {@code 0x7f}. Arithmetic goes through float, whose precision
 * makes each result correctly rounded (see {@link HalfFloats}).
 */
public final class Float8s {
    private Float8s() {
    }

    /** @return the value of e4m3 {@code bits} */
    public static float fromE4M3(byte bits) {
        return decode(bits, 3, 7, false);
    }

    /** @return the value of e5m2 {@code bits} */
    public static float fromE5M2(byte bits) {
        return decode(bits, 2, 15, true);
    }

    /** @return {@code f} as e4m3: nearest even, saturated to +-448, NaN as 0x7f */
    public static byte toE4M3(float f) {
        return encode(f, 3, 7, 448f);
    }

    /** @return {@code f} as e5m2: nearest even, saturated to +-57344, NaN as 0x7f */
    public static byte toE5M2(float f) {
        return encode(f, 2, 15, 57344f);
    }

    private static float decode(byte bits, int mantissaBits, int bias, boolean ieee) {
        int v = bits & 0xff;
        boolean negative = (v & 0x80) != 0;
        int exponent = (v >> mantissaBits) & ((1 << (7 - mantissaBits)) - 1);
        int mantissa = v & ((1 << mantissaBits) - 1);
        int maxExponent = (1 << (7 - mantissaBits)) - 1;
        float magnitude;
        if (ieee && exponent == maxExponent) {
            magnitude = mantissa == 0 ? Float.POSITIVE_INFINITY : Float.NaN;
        } else if (!ieee && exponent == maxExponent && mantissa == (1 << mantissaBits) - 1) {
            magnitude = Float.NaN;
        } else if (exponent == 0) {
            magnitude = (float) Math.scalb((double) mantissa, 1 - bias - mantissaBits);
        } else {
            magnitude = (float) Math.scalb((double) ((1 << mantissaBits) | mantissa), exponent - bias - mantissaBits);
        }
        return negative ? -magnitude : magnitude;
    }

    private static byte encode(float f, int mantissaBits, int bias, float maxFinite) {
        if (Float.isNaN(f)) {
            return 0x7f;
        }
        int sign = Float.floatToRawIntBits(f) < 0 ? 0x80 : 0;
        double x = Math.abs((double) f);
        // the quantum of x's binade, never below the subnormals' one
        int exponent = Math.max(Math.getExponent(x), 1 - bias);
        double quantum = Math.scalb(1.0, exponent - mantissaBits);
        double rounded = Math.rint(x / quantum) * quantum; // exact scaling; rint rounds half to even
        if (rounded > maxFinite) {
            rounded = maxFinite;
        }
        if (rounded == 0) {
            return (byte) sign;
        }
        int e = Math.getExponent(rounded);
        int bits;
        if (e < 1 - bias) {
            bits = (int) (rounded / Math.scalb(1.0, 1 - bias - mantissaBits)); // subnormal
        } else {
            int mantissa = (int) ((rounded / Math.scalb(1.0, e) - 1) * (1 << mantissaBits));
            bits = ((e + bias) << mantissaBits) | mantissa;
        }
        return (byte) (sign | bits);
    }
}
