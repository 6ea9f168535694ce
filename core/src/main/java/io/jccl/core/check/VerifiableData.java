package io.jccl.core.check;

import io.jccl.core.kernel.HalfFloats;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The value rank {@code r} contributes at element {@code i}, and the exact result of reducing
 * every rank's values, for one type, operation and seed.
 *
 * <p>Values are small integers chosen per operation: within [-5, 5] for sums and averages, 1, 2 or
 * -1 (rarely 2) for products, within [-48, 48] for maxima and minima, and non-negative for unsigned
 * types. Every partial result is then exact in every type (bfloat16 holds integers up to 256 exactly,
 * enough for 51 ranks' sums), and integer types wrap exactly as C does, so the expected result does
 * not depend on the order of the reduction. Averages are the exact sum divided by the rank count in
 * the type's arithmetic, as JCCL computes them; comparisons allow floating-point averages 2 ulps, as
 * nccl-tests does.
 */
public final class VerifiableData {
    private final DataType type;
    private final ReduceOp op;
    private final int nranks;
    private final long seed;

    /**
     * @param op     the reduction, or {@code null} for collectives that only move data
     * @param nranks ranks taking part
     * @param seed   varies the data between runs
     */
    public VerifiableData(DataType type, ReduceOp op, int nranks, long seed) {
        this.type = type;
        this.op = op;
        this.nranks = nranks;
        this.seed = seed;
    }

    /** @return the element type */
    public DataType type() {
        return type;
    }

    /** @return the integer rank {@code rank} contributes at element {@code index} */
    public long value(int rank, long index) {
        boolean unsigned = type == DataType.UINT8 || type == DataType.UINT32 || type == DataType.UINT64;
        long h = index * 7 + rank * 13L + seed;
        if (op == null) {
            return rawByteType() ? Math.floorMod(index * 31 + rank * 17L + seed, 256)
                    : Math.floorMod(index * 31 + rank * 17L + seed, 251) - (unsigned ? 0 : 125);
        }
        return switch (op) {
            case SUM, AVG -> Math.floorMod(h, 11) - (unsigned ? 0 : 5);
            case PROD -> Math.floorMod(index + rank + seed, 13) == 0 ? 2
                    : !unsigned && Math.floorMod(index * 3 + rank + seed, 7) == 0 ? -1 : 1;
            case MAX, MIN -> Math.floorMod(index * 31 + rank * 17L + seed, 97) - (unsigned ? 0 : 48);
        };
    }

    /** @return the exact reduction over all ranks at element {@code index}, before conversion to the type */
    long reduced(long index) {
        long acc = value(0, index);
        for (int r = 1; r < nranks; r++) {
            long v = value(r, index);
            acc = switch (op) {
                case SUM, AVG -> acc + v;
                case PROD -> acc * v;
                case MAX -> Math.max(acc, v);
                case MIN -> Math.min(acc, v);
            };
        }
        return acc;
    }

    /**
     * Writes rank {@code rank}'s values for elements {@code firstIndex ..} into {@code buf}.
     *
     * @param offset byte offset in {@code buf}
     */
    public void fill(MemorySegment buf, long offset, long count, int rank, long firstIndex) {
        for (long i = 0; i < count; i++) {
            store(buf, offset + i * type.size(), value(rank, firstIndex + i));
        }
    }

    /** Writes the expected reduction of every rank's values for elements {@code firstIndex ..}. */
    public void fillReduced(MemorySegment buf, long offset, long count, long firstIndex) {
        for (long i = 0; i < count; i++) {
            long at = offset + i * type.size();
            long r = reduced(firstIndex + i);
            if (op == ReduceOp.AVG) {
                storeAverage(buf, at, r);
            } else {
                store(buf, at, r);
            }
        }
    }

    /**
     * @return how many of {@code count} elements of {@code actual} differ from {@code expected}
     *         (bit for bit; floating-point averages may differ by 2 ulps)
     */
    public long countWrong(MemorySegment actual, long actualOffset, MemorySegment expected, long expectedOffset,
                           long count) {
        int size = type.size();
        long wrong = 0;
        boolean tolerant = op == ReduceOp.AVG && type.isFloatingPoint();
        for (long i = 0; i < count; i++) {
            long a = bits(actual, actualOffset + i * size);
            long e = bits(expected, expectedOffset + i * size);
            if (a != e && (!tolerant || Math.abs(a - e) > 2)) {
                wrong++;
            }
        }
        return wrong;
    }

    private boolean rawByteType() {
        return type == DataType.FLOAT8_E4M3 || type == DataType.FLOAT8_E5M2;
    }

    private long bits(MemorySegment m, long at) {
        return switch (type.size()) {
            case 1 -> m.get(ValueLayout.JAVA_BYTE, at);
            case 2 -> m.get(ValueLayout.JAVA_SHORT_UNALIGNED, at);
            case 4 -> m.get(ValueLayout.JAVA_INT_UNALIGNED, at);
            default -> m.get(ValueLayout.JAVA_LONG_UNALIGNED, at);
        };
    }

    private void store(MemorySegment m, long at, long v) {
        switch (type) {
            case INT8, UINT8, FLOAT8_E4M3, FLOAT8_E5M2 -> m.set(ValueLayout.JAVA_BYTE, at, (byte) v);
            case INT32, UINT32 -> m.set(ValueLayout.JAVA_INT_UNALIGNED, at, (int) v);
            case INT64, UINT64 -> m.set(ValueLayout.JAVA_LONG_UNALIGNED, at, v);
            case FLOAT16 -> m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, HalfFloats.toFloat16(v));
            case BFLOAT16 -> m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, HalfFloats.toBfloat16(v));
            case FLOAT32 -> m.set(ValueLayout.JAVA_FLOAT_UNALIGNED, at, v);
            case FLOAT64 -> m.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, at, v);
        }
    }

    /** The exact sum divided by the rank count as the type divides: integers truncate, floats round. */
    private void storeAverage(MemorySegment m, long at, long sum) {
        switch (type) {
            case FLOAT16 -> m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, HalfFloats.toFloat16((float) sum / nranks));
            case BFLOAT16 -> m.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, HalfFloats.toBfloat16((float) sum / nranks));
            case FLOAT32 -> m.set(ValueLayout.JAVA_FLOAT_UNALIGNED, at, (float) sum / nranks);
            case FLOAT64 -> m.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, at, (double) sum / nranks);
            default -> store(m, at, sum / nranks);
        }
    }
}
