package io.jccl.core.kernel;

import io.jccl.cuda.Cuda;
import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.CudaFunction;
import io.jccl.cuda.CudaModule;
import io.jccl.cuda.CudaStream;
import io.jccl.cuda.Nvrtc;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * The arithmetic of collectives on one GPU's memory: {@code reduce.cu} (beside this class), compiled
 * by NVRTC for the GPU at hand when the kernel is created, one CUDA kernel per type and operation.
 * Each call queues its kernel on the kernel's own stream and waits for it, as the
 * {@link ReductionKernel} contract (synchronous, like the host kernel) asks; collectives that
 * enqueue on the caller's stream launch the same functions through {@link #function}.
 *
 * <p>Results equal {@link HostReductionKernel}'s bit for bit (see {@code reduce.cu}); the 8-bit
 * floating-point types need compute capability 8.9 or later.
 */
public final class CudaReductionKernel implements ReductionKernel, AutoCloseable {
    /** Threads per block; the grid covers the elements, a grid-stride loop the rest. */
    private static final int BLOCK = 256;
    private static final int MAX_BLOCKS = 65535;

    private final CudaDevice device;
    private final CudaModule module;
    private final CudaStream stream;
    private final Map<DataType, Map<ReduceOp, CudaFunction>> reductions = new EnumMap<>(DataType.class);
    private final Map<DataType, CudaFunction> divisions = new EnumMap<>(DataType.class);

    /** @return whether GPU kernels can be built here: CUDA with a GPU, and NVRTC */
    public static boolean isAvailable() {
        return Cuda.isAvailable() && Nvrtc.isAvailable();
    }

    /** @return why not, or {@code null} */
    public static Throwable unavailabilityCause() {
        return !Cuda.isAvailable() ? Cuda.unavailabilityCause() : Nvrtc.unavailabilityCause();
    }

    /**
     * Compiles and loads the kernels for {@code device} (NVRTC and the driver's PTX compiler: about a
     * second, once per GPU and process).
     */
    public CudaReductionKernel(CudaDevice device) {
        if (!isAvailable()) {
            throw new UnsupportedOperationException("GPU reduction kernels cannot be built: "
                    + unavailabilityCause().getMessage(), unavailabilityCause());
        }
        this.device = device;
        String arch = "--gpu-architecture=compute_" + device.computeCapability().replace(".", "");
        byte[] ptx = Nvrtc.compile(source(), "reduce.cu", arch);
        this.module = CudaModule.load(device, ptx);
        this.stream = device.createStream();
        for (DataType type : DataType.values()) {
            Map<ReduceOp, CudaFunction> byOp = new EnumMap<>(ReduceOp.class);
            for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN}) {
                CudaFunction f = lookup(name(type, op.name()));
                if (f != null) {
                    byOp.put(op, f);
                }
            }
            reductions.put(type, byOp);
            CudaFunction div = lookup(name(type, "div"));
            if (div != null) {
                divisions.put(type, div);
            }
        }
    }

    /** @return reduce.cu's text: the operations of every type, which other kernels (the P2P ring's) build on */
    public static String source() {
        try (InputStream in = CudaReductionKernel.class.getResourceAsStream("reduce.cu")) {
            if (in == null) {
                throw new IllegalStateException("reduce.cu is missing from jccl-core's jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The kernel's name in reduce.cu: {@code jccl_<type>_<op>}, e.g. {@code jccl_float8e4m3_sum}. */
    private static String name(DataType type, String op) {
        return "jccl_" + typeName(type) + "_" + op.toLowerCase(Locale.ROOT);
    }

    /** @return a type's name in reduce.cu's kernels and functors, e.g. {@code float8e4m3} */
    public static String typeName(DataType type) {
        return type.name().toLowerCase(Locale.ROOT).replace("float8_", "float8");
    }

    private CudaFunction lookup(String name) {
        try {
            return module.function(name);
        } catch (RuntimeException e) {
            return null; // not built for this GPU (fp8 below compute capability 8.9)
        }
    }

    /** @return the GPU these kernels run on */
    public CudaDevice device() {
        return device;
    }

    /**
     * @return the CUDA kernel {@code dst = a op b} ({@code (a, b, dst, count)}), or {@code null} if this
     *         GPU has none for the pair
     */
    public CudaFunction function(DataType type, ReduceOp op) {
        return reductions.get(type).get(op);
    }

    @Override
    public boolean supports(DataType type, ReduceOp op) {
        if (op == ReduceOp.AVG) {
            return reductions.get(type).containsKey(ReduceOp.SUM) && divisions.containsKey(type);
        }
        return reductions.get(type).containsKey(op);
    }

    @Override
    public void reduce(DataType type, ReduceOp op, MemorySegment a, long aOffset, MemorySegment b, long bOffset,
                       MemorySegment dst, long dstOffset, long count) {
        CudaFunction f = function(type, op);
        if (f == null) {
            throw new UnsupportedOperationException(op.ncclName() + " on " + type.ncclName() + " has no kernel on "
                    + device + (type.size() == 1 && type.isFloatingPoint() ? " (8-bit floats need compute capability 8.9)" : ""));
        }
        if (count == 0) {
            return;
        }
        f.launch(stream, blocks(count), BLOCK, a.address() + aOffset, b.address() + bOffset,
                dst.address() + dstOffset, count);
        stream.synchronize();
    }

    @Override
    public void divide(DataType type, MemorySegment buf, long offset, long count, int divisor) {
        if (divisor == 1 || count == 0) {
            return;
        }
        CudaFunction f = divisions.get(type);
        if (f == null) {
            throw new UnsupportedOperationException("ncclAvg on " + type.ncclName() + " has no kernel on " + device);
        }
        f.launch(stream, blocks(count), BLOCK, buf.address() + offset, count, divisor);
        stream.synchronize();
    }

    @Override
    public boolean onHost() {
        return false;
    }

    @Override
    public void copy(MemorySegment src, long srcOffset, MemorySegment dst, long dstOffset, long bytes) {
        if (bytes == 0 || src.address() + srcOffset == dst.address() + dstOffset) {
            return;
        }
        long from = src.address() + srcOffset;
        long to = dst.address() + dstOffset;
        if (from < to + bytes && to < from + bytes) {
            // partly overlapping ranges: CUDA's copies do not promise memmove, so go through a copy
            try (var staging = device.allocate(bytes)) {
                stream.copyAsync(staging.segment(), src.asSlice(srcOffset, bytes));
                stream.copyAsync(dst.asSlice(dstOffset, bytes), staging.segment());
                stream.synchronize();
            }
            return;
        }
        stream.copyAsync(dst.asSlice(dstOffset, bytes), src.asSlice(srcOffset, bytes));
        stream.synchronize();
    }

    private static int blocks(long count) {
        return (int) Math.min(MAX_BLOCKS, (count + BLOCK - 1) / BLOCK);
    }

    /** Releases the stream and the module. */
    @Override
    public void close() {
        stream.close();
        module.close();
    }
}
