package io.jccl.bench;

import io.jccl.core.kernel.CudaReductionKernel;
import io.jccl.cuda.Cuda;
import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.DeviceBuffer;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;

/**
 * The GPU reduction kernel's memory bandwidth against the GPU's own, in the same run: a
 * device-to-device copy ({@code cuMemcpy}) moves 2 bytes per byte copied (read, write), a reduction
 * {@code d = a op b} 3 (two reads, a write); each figure is those bytes over the best time of
 * {@code repeat} runs. The ratio is the kernel's bandwidth over the copy's.
 */
public final class KernelBandwidth {
    private KernelBandwidth() {
    }

    /**
     * @param bytes  bytes per buffer
     * @param types  the types to measure (sum)
     * @param repeat runs per figure; the best is kept
     */
    public static void run(PrintWriter out, long bytes, List<DataType> types, int repeat) {
        if (!CudaReductionKernel.isAvailable()) {
            out.println("# no GPU kernels here: " + CudaReductionKernel.unavailabilityCause().getMessage());
            return;
        }
        CudaDevice gpu = Cuda.device(0);
        out.printf(Locale.ROOT, "# %s; sum d = a + b of %d MiB buffers, best of %d, same run%n", gpu, bytes >> 20, repeat);
        out.printf(Locale.ROOT, "# %-12s %14s %16s %8s%n", "type", "copy GB/s", "reduce GB/s", "ratio");
        try (CudaReductionKernel kernel = new CudaReductionKernel(gpu);
             DeviceBuffer a = gpu.allocate(bytes);
             DeviceBuffer b = gpu.allocate(bytes);
             DeviceBuffer d = gpu.allocate(bytes)) {
            gpu.fill(a.segment(), (byte) 1);
            gpu.fill(b.segment(), (byte) 2);
            for (DataType type : types) {
                if (!kernel.supports(type, ReduceOp.SUM)) {
                    out.printf(Locale.ROOT, "  %-12s (no kernel on this GPU)%n", type.ncclName());
                    continue;
                }
                long count = bytes / type.size();
                long copyNanos = Long.MAX_VALUE;
                long reduceNanos = Long.MAX_VALUE;
                Cuda.copy(d.segment(), a.segment()); // warm-up
                kernel.reduce(type, ReduceOp.SUM, a.segment(), 0, b.segment(), 0, d.segment(), 0, count);
                for (int i = 0; i < repeat; i++) {
                    long t0 = System.nanoTime();
                    Cuda.copy(d.segment(), a.segment());
                    long t1 = System.nanoTime();
                    kernel.reduce(type, ReduceOp.SUM, a.segment(), 0, b.segment(), 0, d.segment(), 0, count);
                    long t2 = System.nanoTime();
                    copyNanos = Math.min(copyNanos, t1 - t0);
                    reduceNanos = Math.min(reduceNanos, t2 - t1);
                }
                double copy = 2.0 * bytes / copyNanos;
                double reduce = 3.0 * bytes / reduceNanos;
                out.printf(Locale.ROOT, "  %-12s %14.1f %16.1f %8.2f%n", type.ncclName(), copy, reduce, reduce / copy);
                out.flush();
            }
        }
    }

    /** {@code java -cp ... io.jccl.bench.KernelBandwidth [MiB] [repeat]}: every type, sum. */
    public static void main(String[] args) {
        long mib = args.length > 0 ? Long.parseLong(args[0]) : 512;
        int repeat = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        PrintWriter out = new PrintWriter(System.out, true);
        run(out, mib << 20, List.of(DataType.values()), repeat);
    }
}
