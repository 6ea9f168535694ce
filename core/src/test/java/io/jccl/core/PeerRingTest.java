package io.jccl.core;

import io.jccl.core.check.CollectiveKind;
import io.jccl.core.check.VerifiableData;
import io.jccl.core.kernel.CudaReductionKernel;
import io.jccl.core.kernel.Float8s;
import io.jccl.core.kernel.HalfFloats;
import io.jccl.cuda.Cuda;
import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.CudaStream;
import io.jccl.cuda.DeviceBuffer;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Collectives on device buffers between GPUs of one host, each rank's kernel writing into the next
 * GPU's memory (issue 13, deliverable 4: P2P). Ranks are threads, rank r on GPU r, so the ring
 * reaches the neighbours through peer access; on a machine of one GPU, three ranks share it
 * ({@code JCCL_P2P_SHARED_GPU}), which runs the same kernels and protocol within one GPU's memory.
 * Processes (CUDA IPC) are run by {@code jccl perf -g 1 -np N}. Skipped with the cause without a GPU.
 * If this fails, check: {@code nvidia-smi topo -m} (the GPUs must reach each other), and the
 * INFO line "no P2P between GPUs (...)", which says why the ring was not set up.
 */
class PeerRingTest {
    private static final long[] COUNTS = {1, 13, 4096, 262_147, (5L << 20) + 3};

    @BeforeAll
    static void needsAGpu() {
        assumeTrue(CudaReductionKernel.isAvailable(), () -> "no GPU kernels here: "
                + CudaReductionKernel.unavailabilityCause().getMessage());
        assumeTrue(Cuda.deviceCount() >= 1, "the CUDA driver sees no GPU");
    }

    /** A rank per GPU up to 4; on one GPU, 3 ranks sharing it (JCCL_P2P_SHARED_GPU), so the protocol runs anyway. */
    private static int ranks() {
        return Cuda.deviceCount() == 1 ? 3 : Math.min(4, Cuda.deviceCount());
    }

    private static CudaDevice gpuOf(int rank) {
        return Cuda.device(rank % Cuda.deviceCount());
    }

    private static CommConfig.Builder config() {
        return CommConfig.builder().peerToPeerSharedGpu(Cuda.deviceCount() == 1);
    }

    @Test
    void everyTypeAndOperationEqualsTheReferenceInPlaceAndOutOfPlace() {
        int n = ranks();
        List<String> problems = new ArrayList<>();
        try (LocalRanks ranks = new LocalRanks(n, config().build())) {
            // Buffers are made once and freed at the end: cuMemFree waits for the whole GPU, and ranks
            // sharing one would wait for each other's kernels.
            long most = COUNTS[COUNTS.length - 1] * 8;
            CudaStream[] streams = new CudaStream[n];
            DeviceBuffer[][] buffers = new DeviceBuffer[n][];
            ranks.each((rank, comm) -> {
                streams[rank] = gpuOf(rank).createStream();
                buffers[rank] = new DeviceBuffer[] {gpuOf(rank).allocate(most), gpuOf(rank).allocate(most)};
            });
            for (DataType type : DataType.values()) {
                boolean fp8 = type.size() == 1 && type.isFloatingPoint();
                if (fp8 && Double.parseDouble(Cuda.device(0).computeCapability()) < 8.9) {
                    continue; // no 8-bit float arithmetic below compute capability 8.9
                }
                for (ReduceOp op : ReduceOp.values()) {
                    for (long count : COUNTS) {
                        if (count > 262_147 && !(type == DataType.FLOAT32 || type == DataType.BFLOAT16)) {
                            continue; // the largest size once per element width class is enough
                        }
                        for (boolean inPlace : new boolean[] {false, true}) {
                            VerifiableData data = new VerifiableData(type, op, n, count * 7 + (inPlace ? 1 : 0));
                            List<Long> wrong = ranks.run(rank -> runCase(ranks.comms[rank], streams[rank],
                                    buffers[rank], data, count, type, op, inPlace));
                            long total = wrong.stream().mapToLong(Long::longValue).sum();
                            if (total != 0) {
                                problems.add(type + " " + op + " count " + count + (inPlace ? " in place" : "")
                                        + ": wrong elements per rank " + wrong);
                            }
                        }
                    }
                }
            }
            for (Communicator c : ranks.comms) {
                assertTrue(c.usesPeerToPeer(), "rank " + c.rank() + " did not set up the P2P ring");
            }
            ranks.each((rank, comm) -> {
                streams[rank].close();
                buffers[rank][0].close();
                buffers[rank][1].close();
            });
        }
        assertEquals(List.of(), problems);
    }

    /** One all-reduce on rank {@code comm}'s GPU: host input copied in, the result copied back and checked. */
    private static long runCase(Communicator comm, CudaStream stream, DeviceBuffer[] buffers, VerifiableData data,
                                long count, DataType type, ReduceOp op, boolean inPlace) {
        int rank = comm.rank();
        long bytes = count * type.size();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment send = buffers[0].segment().asSlice(0, bytes);
            MemorySegment recv = buffers[1].segment().asSlice(0, bytes);
            MemorySegment host = arena.allocate(bytes, 64);
            boolean fp8 = type.size() == 1 && type.isFloatingPoint();
            if (fp8) {
                for (long i = 0; i < count; i++) {
                    host.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, toFloat8(type, fp8Value(op, rank, i, data)));
                }
            } else {
                data.fill(host, 0, count, rank, 0);
            }
            Cuda.copy(send, host);
            MemorySegment out = inPlace ? send : recv;
            comm.allReduce(send, out, count, type, op, stream);
            stream.synchronize();
            MemorySegment result = arena.allocate(bytes, 64);
            Cuda.copy(result, out);
            MemorySegment expected = arena.allocate(bytes, 64);
            if (op == ReduceOp.AVG && !fp8 && type.isFloatingPoint()) {
                return countWrongPremultipliedAverage(result, data, count, type, comm.size());
            }
            if (!fp8) {
                data.fillReduced(expected, 0, count, 0);
                return data.countWrong(result, 0, expected, 0, count);
            }
            long wrong = 0;
            int n = comm.size();
            for (long i = 0; i < count; i++) {
                long acc = fp8Value(op, 0, i, data);
                for (int r = 1; r < n; r++) {
                    long v = fp8Value(op, r, i, data);
                    acc = switch (op) {
                        case SUM, AVG -> acc + v;
                        case PROD -> acc * v;
                        case MAX -> Math.max(acc, v);
                        case MIN -> Math.min(acc, v);
                    };
                }
                byte e = toFloat8(type, op == ReduceOp.AVG ? (float) acc / n : acc);
                wrong += result.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) == e ? 0 : 1;
            }
            return wrong;
        }
    }

    @Test
    void everyRingCollectiveEveryRootInPlaceAndOutOfPlace() {
        int n = ranks();
        long[] counts = {1, 4099, (1L << 20) + 5};
        CollectiveKind[] kinds = {CollectiveKind.REDUCE_SCATTER, CollectiveKind.ALL_GATHER, CollectiveKind.BROADCAST,
                CollectiveKind.REDUCE, CollectiveKind.ALL_REDUCE};
        List<String> problems = new ArrayList<>();
        try (LocalRanks ranks = new LocalRanks(n, config().build())) {
            long most = counts[counts.length - 1] * 8 * n;
            CudaStream[] streams = new CudaStream[n];
            DeviceBuffer[][] buffers = new DeviceBuffer[n][];
            ranks.each((rank, comm) -> {
                streams[rank] = gpuOf(rank).createStream();
                buffers[rank] = new DeviceBuffer[] {gpuOf(rank).allocate(most), gpuOf(rank).allocate(most)};
            });
            for (CollectiveKind kind : kinds) {
                for (DataType type : new DataType[] {DataType.FLOAT32, DataType.INT8, DataType.FLOAT64, DataType.BFLOAT16}) {
                    for (ReduceOp op : kind.reduces() ? new ReduceOp[] {ReduceOp.SUM, ReduceOp.MAX, ReduceOp.AVG}
                            : new ReduceOp[] {null}) {
                        boolean rooted = kind == CollectiveKind.BROADCAST || kind == CollectiveKind.REDUCE;
                        for (int root = 0; root < (rooted ? n : 1); root++) {
                            for (long count : counts) {
                                for (boolean inPlace : new boolean[] {false, true}) {
                                    int theRoot = root;
                                    VerifiableData data = new VerifiableData(type, op, n, count + root + (inPlace ? 1 : 0));
                                    List<Long> wrong = ranks.run(rank -> runCollective(kind, ranks.comms[rank],
                                            streams[rank], buffers[rank], data, count, type, op, theRoot, inPlace));
                                    long total = wrong.stream().mapToLong(Long::longValue).sum();
                                    if (total != 0) {
                                        problems.add(kind + " " + type + " " + op + " root " + root + " count " + count
                                                + (inPlace ? " in place" : "") + ": wrong elements per rank " + wrong);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            ranks.each((rank, comm) -> {
                streams[rank].close();
                buffers[rank][0].close();
                buffers[rank][1].close();
            });
        }
        assertEquals(List.of(), problems);
    }

    /** One collective on device buffers, laid out as NCCL's in-place calls are; the result checked on the host. */
    private static long runCollective(CollectiveKind kind, Communicator comm, CudaStream stream, DeviceBuffer[] buffers,
                                      VerifiableData data, long count, DataType type, ReduceOp op, int root,
                                      boolean inPlace) {
        int n = comm.size();
        int rank = comm.rank();
        long size = type.size();
        long sendBytes = kind.sendElements(count, n) * size;
        long recvBytes = kind.recvElements(count, n) * size;
        MemorySegment a = buffers[0].segment();
        MemorySegment send;
        MemorySegment recv;
        if (!inPlace) {
            send = a.asSlice(0, sendBytes);
            recv = buffers[1].segment().asSlice(0, recvBytes);
        } else if (kind == CollectiveKind.ALL_GATHER) {
            recv = a.asSlice(0, recvBytes);
            send = recv.asSlice(rank * count * size, count * size);
        } else if (kind == CollectiveKind.REDUCE_SCATTER) {
            send = a.asSlice(0, sendBytes);
            recv = send.asSlice(rank * count * size, count * size);
        } else {
            send = a.asSlice(0, Math.max(sendBytes, recvBytes));
            recv = send;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(sendBytes, 64);
            kind.fillInput(data, host, count, rank, n, root);
            if (kind != CollectiveKind.BROADCAST || rank == root) {
                Cuda.copy(send.asSlice(0, sendBytes), host);
            }
            switch (kind) {
                case ALL_REDUCE -> comm.allReduce(send, recv, count, type, op, stream);
                case REDUCE_SCATTER -> comm.reduceScatter(send, recv, count, type, op, stream);
                case ALL_GATHER -> comm.allGather(send, recv, count, type, stream);
                case BROADCAST -> comm.broadcast(send, recv, count, type, root, stream);
                case REDUCE -> comm.reduce(send, recv, count, type, op, root, stream);
                default -> throw new IllegalArgumentException(kind.toString());
            }
            stream.synchronize();
            MemorySegment expected = arena.allocate(recvBytes, 64);
            long elements = kind.fillExpected(data, expected, count, rank, n, root);
            if (elements == 0) {
                return 0;
            }
            MemorySegment result = arena.allocate(recvBytes, 64);
            Cuda.copy(result, recv.asSlice(0, recvBytes));
            if (op == ReduceOp.AVG && type.isFloatingPoint()) {
                return countWrongPremultipliedAverage(result, data, elements, type, n,
                        kind == CollectiveKind.REDUCE_SCATTER ? rank * count : 0);
            }
            return data.countWrong(result, 0, expected, 0, elements);
        }
    }

    /**
     * NCCL's avg on floats (checked against NCCL's bits by NcclReferenceTest) multiplies every input
     * by 1/n, rounded to the type, and sums in ring order: the result is the mean within n rounding
     * errors of the largest input's share, n + 1 units in the last place of max |v| / n.
     */
    private static long countWrongPremultipliedAverage(MemorySegment result, VerifiableData data, long count,
                                                       DataType type, int n) {
        return countWrongPremultipliedAverage(result, data, count, type, n, 0);
    }

    private static long countWrongPremultipliedAverage(MemorySegment result, VerifiableData data, long count,
                                                       DataType type, int n, long firstIndex) {
        long wrong = 0;
        for (long i = 0; i < count; i++) {
            double sum = 0;
            double largest = 0;
            for (int r = 0; r < n; r++) {
                double v = data.value(r, firstIndex + i);
                sum += v;
                largest = Math.max(largest, Math.abs(v) / n);
            }
            double actual = switch (type) {
                case FLOAT16 -> HalfFloats.fromFloat16(result.getAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT, i));
                case BFLOAT16 -> HalfFloats.fromBfloat16(result.getAtIndex(java.lang.foreign.ValueLayout.JAVA_SHORT, i));
                case FLOAT32 -> result.getAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i);
                default -> result.getAtIndex(java.lang.foreign.ValueLayout.JAVA_DOUBLE, i);
            };
            int mantissaBits = switch (type) {
                case FLOAT16 -> 10;
                case BFLOAT16 -> 7;
                case FLOAT32 -> 23;
                default -> 52;
            };
            double ulp = largest == 0 ? 0 : Math.pow(2, Math.getExponent(largest) - mantissaBits);
            wrong += Math.abs(actual - sum / n) <= (n + 1) * ulp ? 0 : 1;
        }
        return wrong;
    }

    /**
     * 8-bit float inputs (VerifiableData's are raw bytes for them): small integers whose every partial
     * sum or product is exact in both formats (e5m2 holds the integers up to 8 exactly), so the ring's
     * order of reduction cannot change the result.
     */
    private static long fp8Value(ReduceOp op, int rank, long index, VerifiableData data) {
        long h = index * 7 + rank * 13L + data.value(0, 0);
        return switch (op) {
            case SUM, AVG -> Math.floorMod(h, 5) - 2;
            case PROD -> Math.floorMod(index + rank, 5) == 0 ? 2 : Math.floorMod(index * 3 + rank, 7) == 0 ? -1 : 1;
            case MAX, MIN -> Math.floorMod(index * 31 + rank * 17L, 13) - 6;
        };
    }

    private static byte toFloat8(DataType type, float v) {
        return type == DataType.FLOAT8_E4M3 ? Float8s.toE4M3(v) : Float8s.toE5M2(v);
    }

    @Test
    void aRankThatNeverCallsEndsTheOthersKernelsWithinTheTimeout() {
        int n = ranks();
        long count = 1 << 20;
        CommConfig config = config().timeout(Duration.ofSeconds(2)).build();
        try (LocalRanks ranks = new LocalRanks(n, config)) {
            CudaStream[] streams = new CudaStream[n];
            DeviceBuffer[] buffers = new DeviceBuffer[n];
            ranks.each((rank, comm) -> {
                streams[rank] = gpuOf(rank).createStream();
                buffers[rank] = gpuOf(rank).allocate(count * 4);
                comm.allReduce(buffers[rank].segment(), buffers[rank].segment(), count, DataType.FLOAT32, ReduceOp.SUM,
                        streams[rank]);
                streams[rank].synchronize();
            });
            // Rank n-1 stays away from the second call: rank 0's kernel must end, and say why.
            long start = System.nanoTime();
            Communicator first = ranks.comms[0];
            first.allReduce(buffers[0].segment(), buffers[0].segment(), count, DataType.FLOAT32, ReduceOp.SUM, streams[0]);
            streams[0].synchronize();
            long ms = (System.nanoTime() - start) / 1_000_000;
            JcclException e = first.asyncError();
            assertNotNull(e, "rank 0's all-reduce ended without its peers and without an error");
            assertTrue(e.getMessage().contains("made no progress"), e.getMessage());
            assertTrue(ms >= 1_500 && ms < 10_000, "the kernel ended after " + ms + " ms; the timeout is 2000");
            ranks.abortAll();
            for (int r = 0; r < n; r++) {
                streams[r].synchronize(); // every queued kernel ended (the abort stops the ones still waiting)
                streams[r].close();
                buffers[r].close();
            }
        }
    }
}
