package io.jccl.tck.internal.collnet;

import io.jccl.spi.DataType;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Reads and writes one element of any {@link DataType} as a {@code double}, so the kit can build
 * inputs and check reductions for every type with one code path. Exact for the values the kit
 * uses: integers up to 8 in magnitude and powers of two up to 16, which every type, fp8 e5m2
 * included, represents exactly.
 */
public final class ElementCodec {
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;

    private ElementCodec() {
    }

    /** Writes {@code v} as element {@code i} of a buffer of {@code type}. */
    public static void put(MemorySegment s, long i, DataType type, double v) {
        long off = i * type.size();
        switch (type) {
            case INT8, UINT8 -> s.set(ValueLayout.JAVA_BYTE, off, (byte) (long) v);
            case INT32, UINT32 -> s.set(I32, off, (int) (long) v);
            case INT64, UINT64 -> s.set(I64, off, (long) v);
            case FLOAT16 -> s.set(U16, off, Float.floatToFloat16((float) v));
            case BFLOAT16 -> s.set(U16, off, toBfloat16((float) v));
            case FLOAT32 -> s.set(F32, off, (float) v);
            case FLOAT64 -> s.set(F64, off, v);
            case FLOAT8_E4M3 -> s.set(ValueLayout.JAVA_BYTE, off, toFp8(v, 4, 3, 7));
            case FLOAT8_E5M2 -> s.set(ValueLayout.JAVA_BYTE, off, toFp8(v, 5, 2, 15));
        }
    }

    /** @return element {@code i} of a buffer of {@code type} */
    public static double get(MemorySegment s, long i, DataType type) {
        long off = i * type.size();
        return switch (type) {
            case INT8 -> s.get(ValueLayout.JAVA_BYTE, off);
            case UINT8 -> Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, off));
            case INT32 -> s.get(I32, off);
            case UINT32 -> Integer.toUnsignedLong(s.get(I32, off));
            case INT64 -> s.get(I64, off);
            case UINT64 -> s.get(I64, off);
            case FLOAT16 -> Float.float16ToFloat(s.get(U16, off));
            case BFLOAT16 -> Float.intBitsToFloat(Short.toUnsignedInt(s.get(U16, off)) << 16);
            case FLOAT32 -> s.get(F32, off);
            case FLOAT64 -> s.get(F64, off);
            case FLOAT8_E4M3 -> fromFp8(s.get(ValueLayout.JAVA_BYTE, off), 3, 7, false);
            case FLOAT8_E5M2 -> fromFp8(s.get(ValueLayout.JAVA_BYTE, off), 2, 15, true);
        };
    }

    /** Truncating float to bfloat16 keeps exactly the values with at most 8 significant bits, as the kit's are. */
    private static short toBfloat16(float v) {
        int bits = Float.floatToIntBits(v);
        int rounded = bits + 0x7FFF + ((bits >>> 16) & 1);
        return (short) (rounded >>> 16);
    }

    /** Encodes a value that fp8 represents exactly (round to nearest even otherwise; no overflow handling). */
    static byte toFp8(double v, int expBits, int mantBits, int bias) {
        int sign = v < 0 || (v == 0 && 1 / v < 0) ? 0x80 : 0;
        double a = Math.abs(v);
        if (a == 0) {
            return (byte) sign;
        }
        int e = Math.getExponent(a);
        int minExp = 1 - bias;
        if (e < minExp) {
            long m = Math.round(a / Math.scalb(1.0, minExp - mantBits));
            return (byte) (sign | (int) m);
        }
        double frac = a / Math.scalb(1.0, e) - 1.0;
        long m = Math.round(frac * (1 << mantBits));
        if (m == (1L << mantBits)) {
            m = 0;
            e++;
        }
        int field = e + bias;
        int maxField = (1 << expBits) - 1;
        if (field > maxField) {
            throw new IllegalArgumentException(v + " does not fit fp8 e" + expBits + "m" + mantBits);
        }
        return (byte) (sign | (field << mantBits) | (int) m);
    }

    static double fromFp8(byte b, int mantBits, int bias, boolean ieeeSpecials) {
        int bits = b & 0xFF;
        int sign = bits >>> 7;
        int field = (bits >>> mantBits) & ((1 << (7 - mantBits)) - 1);
        int m = bits & ((1 << mantBits) - 1);
        int maxField = (1 << (7 - mantBits)) - 1;
        double v;
        if (ieeeSpecials && field == maxField) {
            v = m == 0 ? Double.POSITIVE_INFINITY : Double.NaN;
        } else if (!ieeeSpecials && field == maxField && m == (1 << mantBits) - 1) {
            v = Double.NaN;
        } else if (field == 0) {
            v = m * Math.scalb(1.0, 1 - bias - mantBits);
        } else {
            v = (1 + m / (double) (1 << mantBits)) * Math.scalb(1.0, field - bias);
        }
        return sign == 1 ? -v : v;
    }
}
