package io.jccl.core.kernel;

import io.jccl.cuda.Cuda;
import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.DeviceBuffer;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every type and operation of the GPU kernels against the host kernel, bit for bit (the 8-bit
 * floats, which the host cannot reduce, against {@link Float8s} arithmetic). Needs a GPU and NVRTC;
 * skips with the cause elsewhere.
 */
class CudaReductionKernelTest {
    private static final int COUNT = 100_003; // not a multiple of the block: the tail must be right
    private static final ReduceOp[] OPS = {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN};
    private static CudaReductionKernel gpu;

    @BeforeAll
    static void buildKernels() {
        assumeTrue(CudaReductionKernel.isAvailable(),
                () -> "no GPU kernels here: " + CudaReductionKernel.unavailabilityCause().getMessage());
        gpu = new CudaReductionKernel(Cuda.device(0));
    }

    @AfterAll
    static void release() {
        if (gpu != null) {
            gpu.close();
        }
    }

    @Test
    void everyTypeAndOperationEqualsTheHostBitForBit() {
        CudaDevice device = gpu.device();
        boolean fp8 = Double.parseDouble(device.computeCapability()) >= 8.9;
        List<String> mismatches = new ArrayList<>();
        Random random = new Random(42);
        for (DataType type : DataType.values()) {
            boolean narrowFloat = type == DataType.FLOAT8_E4M3 || type == DataType.FLOAT8_E5M2;
            if (narrowFloat && !fp8) {
                assertTrue(!gpu.supports(type, ReduceOp.SUM), "fp8 below compute capability 8.9");
                continue;
            }
            for (ReduceOp op : OPS) {
                assertTrue(gpu.supports(type, op), op + " on " + type);
                for (boolean inPlace : new boolean[] {false, true}) {
                    String m = compare(device, type, op, inPlace, random);
                    if (m != null) {
                        mismatches.add(m);
                    }
                }
            }
            String m = compareDivide(device, type, random);
            if (m != null) {
                mismatches.add(m);
            }
        }
        assertTrue(mismatches.isEmpty(), "GPU and host differ:\n" + String.join("\n", mismatches));
    }

    /** Inputs: random bits, made finite for sum, prod and divide (NaN payloads are not arithmetic). */
    private static MemorySegment input(Arena arena, DataType type, boolean anyBits, Random random) {
        MemorySegment s = arena.allocate((long) COUNT * type.size(), 8);
        for (long i = 0; i < COUNT; i++) {
            long o = i * type.size();
            switch (type) {
                case FLOAT32 -> s.set(JAVA_FLOAT_UNALIGNED, o, anyBits && i % 97 == 0
                        ? special(i) : (float) random.nextGaussian() * 1e3f);
                case FLOAT64 -> s.set(JAVA_DOUBLE_UNALIGNED, o, anyBits && i % 97 == 0
                        ? special(i) : random.nextGaussian() * 1e6);
                case FLOAT16 -> s.set(JAVA_SHORT_UNALIGNED, o, anyBits ? (short) random.nextInt()
                        : HalfFloats.toFloat16((float) random.nextGaussian() * 50));
                case BFLOAT16 -> s.set(JAVA_SHORT_UNALIGNED, o, anyBits ? (short) random.nextInt()
                        : HalfFloats.toBfloat16((float) random.nextGaussian() * 50));
                case FLOAT8_E4M3 -> s.set(JAVA_BYTE, o, anyBits ? (byte) random.nextInt()
                        : Float8s.toE4M3((float) random.nextGaussian() * 20));
                case FLOAT8_E5M2 -> s.set(JAVA_BYTE, o, anyBits ? (byte) random.nextInt()
                        : Float8s.toE5M2((float) random.nextGaussian() * 20));
                default -> {
                    for (int k = 0; k < type.size(); k++) {
                        s.set(JAVA_BYTE, o + k, (byte) random.nextInt());
                    }
                }
            }
        }
        return s;
    }

    private static float special(long i) {
        float[] v = {Float.NaN, -0.0f, 0.0f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY};
        return v[(int) (i / 97 % v.length)];
    }

    private static String compare(CudaDevice device, DataType type, ReduceOp op, boolean inPlace, Random random) {
        long bytes = (long) COUNT * type.size();
        boolean anyBits = op == ReduceOp.MAX || op == ReduceOp.MIN;
        try (Arena arena = Arena.ofConfined();
             DeviceBuffer a = device.allocate(bytes);
             DeviceBuffer b = device.allocate(bytes);
             DeviceBuffer d = device.allocate(bytes)) {
            MemorySegment x = input(arena, type, anyBits, random);
            MemorySegment y = input(arena, type, anyBits, random);
            MemorySegment expected = arena.allocate(bytes, 8);
            hostReduce(type, op, x, y, expected);
            Cuda.copy(a.segment(), x);
            Cuda.copy(b.segment(), y);
            MemorySegment out = inPlace ? a.segment() : d.segment();
            gpu.reduce(type, op, a.segment(), 0, b.segment(), 0, out, 0, COUNT);
            MemorySegment actual = arena.allocate(bytes, 8);
            Cuda.copy(actual, out);
            return mismatch(type, op + (inPlace ? " in place" : ""), expected, actual);
        }
    }

    private static String compareDivide(CudaDevice device, DataType type, Random random) {
        long bytes = (long) COUNT * type.size();
        try (Arena arena = Arena.ofConfined(); DeviceBuffer a = device.allocate(bytes)) {
            MemorySegment x = input(arena, type, false, random);
            MemorySegment expected = arena.allocate(bytes, 8);
            MemorySegment.copy(x, 0, expected, 0, bytes);
            hostDivide(type, expected, 7);
            Cuda.copy(a.segment(), x);
            gpu.divide(type, a.segment(), 0, COUNT, 7);
            MemorySegment actual = arena.allocate(bytes, 8);
            Cuda.copy(actual, a.segment());
            return mismatch(type, "divide by 7", expected, actual);
        }
    }

    private static void hostReduce(DataType type, ReduceOp op, MemorySegment x, MemorySegment y, MemorySegment d) {
        if (type == DataType.FLOAT8_E4M3 || type == DataType.FLOAT8_E5M2) {
            boolean e4 = type == DataType.FLOAT8_E4M3;
            for (long i = 0; i < COUNT; i++) {
                byte p = x.get(JAVA_BYTE, i);
                byte q = y.get(JAVA_BYTE, i);
                float f = e4 ? Float8s.fromE4M3(p) : Float8s.fromE5M2(p);
                float g = e4 ? Float8s.fromE4M3(q) : Float8s.fromE5M2(q);
                byte r = switch (op) {
                    case SUM -> e4 ? Float8s.toE4M3(f + g) : Float8s.toE5M2(f + g);
                    case PROD -> e4 ? Float8s.toE4M3(f * g) : Float8s.toE5M2(f * g);
                    case MAX -> f >= g || Float.isNaN(f) ? p : q;
                    case MIN -> f <= g || Float.isNaN(f) ? p : q;
                    default -> throw new IllegalArgumentException(op.toString());
                };
                d.set(JAVA_BYTE, i, r);
            }
            return;
        }
        HostReductionKernel.INSTANCE.reduce(type, op, x, 0, y, 0, d, 0, COUNT);
    }

    private static void hostDivide(DataType type, MemorySegment buf, int divisor) {
        if (type == DataType.FLOAT8_E4M3 || type == DataType.FLOAT8_E5M2) {
            boolean e4 = type == DataType.FLOAT8_E4M3;
            for (long i = 0; i < COUNT; i++) {
                byte p = buf.get(JAVA_BYTE, i);
                float f = (e4 ? Float8s.fromE4M3(p) : Float8s.fromE5M2(p)) / divisor;
                buf.set(JAVA_BYTE, i, e4 ? Float8s.toE4M3(f) : Float8s.toE5M2(f));
            }
            return;
        }
        HostReductionKernel.INSTANCE.divide(type, buf, 0, COUNT, divisor);
    }

    private static String mismatch(DataType type, String what, MemorySegment expected, MemorySegment actual) {
        long at = expected.mismatch(actual);
        if (at < 0) {
            return null;
        }
        long element = at / type.size();
        return type + " " + what + ": first difference at element " + element + " (byte " + at + ": host 0x"
                + Integer.toHexString(expected.get(JAVA_BYTE, at) & 0xff) + ", GPU 0x"
                + Integer.toHexString(actual.get(JAVA_BYTE, at) & 0xff) + ")";
    }
}
