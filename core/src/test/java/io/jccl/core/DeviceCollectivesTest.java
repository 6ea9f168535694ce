package io.jccl.core;

import io.jccl.cuda.Cuda;
import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.CudaStream;
import io.jccl.cuda.DeviceBuffer;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Collectives on device buffers, ordered on CUDA streams (issue 13, deliverable 3): ranks as
 * threads sharing GPU 0, each with its own stream; every collective in place and out of place,
 * over the network transport and over shared memory, results copied back and checked element by
 * element. Skipped with the cause where there is no GPU.
 */
class DeviceCollectivesTest {
    private static final long COUNT = 262_147; // a little over 1 MiB of float32: several steps of every channel

    @BeforeAll
    static void needsAGpu() {
        assumeTrue(Cuda.isAvailable(), () -> "no GPU here: " + Cuda.unavailabilityCause().getMessage());
        assumeTrue(Cuda.deviceCount() > 0, "the CUDA driver sees no GPU");
    }

    static Stream<Arguments> layouts() {
        // Through the network: the kernels' FIFO with the proxy (JCCL_NET_FIFO=1), and whole-buffer staging.
        return Stream.of(Arguments.of(2, DataPath.NETWORK, true), Arguments.of(3, DataPath.NETWORK, true),
                Arguments.of(2, DataPath.NETWORK, false), Arguments.of(2, DataPath.SHARED_MEMORY, false));
    }

    /** What rank {@code r} contributes at element {@code i}: small integers, so float sums are exact. */
    private static float value(int r, long i) {
        return (r + 1) * (float) (i % 97 + 1);
    }

    private static DeviceBuffer deviceFloats(CudaDevice gpu, long count, int rank) {
        DeviceBuffer d = gpu.allocate(count * 4);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment h = a.allocate(count * 4, 4);
            for (long i = 0; i < count; i++) {
                h.setAtIndex(ValueLayout.JAVA_FLOAT, i, rank < 0 ? 0f : value(rank, i));
            }
            Cuda.copy(d.segment(), h);
        }
        return d;
    }

    private static float[] read(MemorySegment device, long count) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment h = a.allocate(count * 4, 4);
            Cuda.copy(h, device.asSlice(0, count * 4));
            return h.toArray(ValueLayout.JAVA_FLOAT);
        }
    }

    private static void assertFloats(String what, float[] actual, java.util.function.LongFunction<Float> expected) {
        for (int i = 0; i < actual.length; i++) {
            float e = expected.apply(i);
            if (Float.compare(actual[i], e) != 0) {
                throw new AssertionError(what + ": element " + i + " is " + actual[i] + ", expected " + e);
            }
        }
    }

    @ParameterizedTest(name = "{0} ranks, {1}, network FIFO {2}")
    @MethodSource("layouts")
    void everyCollectiveInPlaceAndOutOfPlaceOnDeviceBuffers(int n, DataPath path, boolean fifo) {
        everyCollective(n, path.config().netFifo(fifo).build(), path == DataPath.NETWORK && fifo, false);
    }

    /**
     * The network FIFO with its slots in GPU memory, handed to the transport (GPUDirect): JcclSocket
     * reports CUDA where the CUDA binding is present, and moves device memory through host mirrors.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "{0} ranks")
    @org.junit.jupiter.params.provider.ValueSource(ints = {2, 3})
    void everyCollectiveThroughTheNetworkFifoWithSlotsInGpuMemory(int n) {
        everyCollective(n, DataPath.NETWORK.config().netFifo(true).netGpuDirect(true).build(), true, true);
    }

    private void everyCollective(int n, CommConfig config, boolean expectFifo, boolean expectGpuDirect) {
        CudaDevice gpu = Cuda.device(0);
        long sum = (long) n * (n + 1) / 2;
        // Every buffer and stream is made before the first collective and freed after the last, by all
        // ranks together: cuMemAlloc and cuMemFree may wait for the whole GPU, so a rank that allocated or
        // freed while another rank's stream waits for a collective would wait for that stream, itself
        // waiting for this rank's next call (NCCL's users meet the same with ranks as threads).
        CudaStream[] streams = new CudaStream[n];
        DeviceBuffer[][] buffers = new DeviceBuffer[n][];
        try (LocalRanks ranks = new LocalRanks(n, config)) {
            ranks.each((rank, comm) -> {
                streams[rank] = gpu.createStream();
                buffers[rank] = new DeviceBuffer[] {deviceFloats(gpu, COUNT * n, rank), deviceFloats(gpu, COUNT * n, -1),
                        deviceFloats(gpu, COUNT * n, rank), deviceFloats(gpu, COUNT * n, -1),
                        deviceFloats(gpu, COUNT * n, rank)};
            });
            ranks.each((rank, comm) -> {
                CudaStream stream = streams[rank];
                DeviceBuffer send = buffers[rank][0];
                DeviceBuffer recv = buffers[rank][1];
                DeviceBuffer inPlace = buffers[rank][2];
                DeviceBuffer gathered = buffers[rank][3];
                DeviceBuffer whole = buffers[rank][4];
                {
                    MemorySegment s = send.segment();
                    MemorySegment r = recv.segment();

                    comm.allReduce(s, r, COUNT, DataType.FLOAT32, ReduceOp.SUM, stream);
                    comm.allReduce(inPlace.segment(), inPlace.segment(), COUNT, DataType.FLOAT32, ReduceOp.SUM, stream);
                    stream.synchronize();
                    assertFloats("allReduce", read(r, COUNT), i -> sum * (float) (i % 97 + 1));
                    assertFloats("allReduce in place", read(inPlace.segment(), COUNT), i -> sum * (float) (i % 97 + 1));

                    int root = n - 1;
                    gpu.fill(recv.segment(), (byte) 0);
                    comm.broadcast(s, r, COUNT, DataType.FLOAT32, root, stream);
                    stream.synchronize();
                    assertFloats("broadcast from " + root, read(r, COUNT), i -> value(root, i));

                    comm.reduce(s, rank == 0 ? r : null, COUNT, DataType.FLOAT32, ReduceOp.MAX, 0, stream);
                    stream.synchronize();
                    if (rank == 0) {
                        assertFloats("reduce max to 0", read(r, COUNT), i -> value(n - 1, i));
                    }

                    comm.allGather(s, r, COUNT, DataType.FLOAT32, stream);
                    stream.synchronize();
                    assertFloats("allGather", read(r, COUNT * n), i -> value((int) (i / COUNT), i % COUNT));
                    MemorySegment myBlock = gathered.segment().asSlice(rank * COUNT * 4, COUNT * 4);
                    stream.copyAsync(myBlock, s.asSlice(0, COUNT * 4));
                    comm.allGather(myBlock, gathered.segment(), COUNT, DataType.FLOAT32, stream);
                    stream.synchronize();
                    assertFloats("allGather in place", read(gathered.segment(), COUNT * n),
                            i -> value((int) (i / COUNT), i % COUNT));

                    comm.reduceScatter(s, r, COUNT, DataType.FLOAT32, ReduceOp.SUM, stream);
                    stream.synchronize();
                    long base = rank * COUNT;
                    assertFloats("reduceScatter", read(r, COUNT), i -> sum * (float) ((base + i) % 97 + 1));
                    MemorySegment mine = whole.segment().asSlice(rank * COUNT * 4, COUNT * 4);
                    comm.reduceScatter(whole.segment(), mine, COUNT, DataType.FLOAT32, ReduceOp.SUM, stream);
                    stream.synchronize();
                    assertFloats("reduceScatter in place", read(mine, COUNT), i -> sum * (float) ((base + i) % 97 + 1));

                    comm.allToAll(s, r, COUNT, DataType.FLOAT32, stream);
                    stream.synchronize();
                    // block p of rank r's output came from rank p's block r
                    assertFloats("allToAll", read(r, COUNT * n), i -> value((int) (i / COUNT), rank * COUNT + i % COUNT));

                    if (rank < 2) {
                        int peer = 1 - rank;
                        if (rank == 0) {
                            comm.send(s, COUNT, DataType.FLOAT32, peer, stream);
                            comm.recv(r, COUNT, DataType.FLOAT32, peer, stream);
                        } else {
                            comm.recv(r, COUNT, DataType.FLOAT32, peer, stream);
                            comm.send(s, COUNT, DataType.FLOAT32, peer, stream);
                        }
                        stream.synchronize();
                        assertFloats("recv from " + peer, read(r, COUNT), i -> value(peer, i));
                    }
                    assertEquals(null, comm.asyncError());
                    assertEquals(expectFifo, comm.usesNetworkFifo(), "the network FIFO runs "
                            + "exactly where asked (if not, the log's INIT line says why)");
                    assertEquals(expectGpuDirect, comm.usesNetworkGpuDirect(), "the FIFO's slots are GPU memory "
                            + "exactly where asked (if not, the log's INIT line says why)");
                }
            });
        } finally {
            closeAll(streams, buffers);
        }
    }


    /**
     * Two ranks through the network FIFO: all-reduces up to 128 KiB take one exchange (each rank sends
     * its whole buffer and reduces the other's), larger ones the ring; every op, in and out of place,
     * sizes on both sides of the switch and of a channel's share.
     */
    @org.junit.jupiter.api.Test
    void allReducesOfTwoRanksThroughTheNetworkFifoAtEverySizeAndOp() {
        CudaDevice gpu = Cuda.device(0);
        long[] counts = {1, 3, 4, 1000, 32_768, 32_769, 65_537, 200_003};
        long max = counts[counts.length - 1];
        CudaStream[] streams = new CudaStream[2];
        DeviceBuffer[][] buffers = new DeviceBuffer[2][];
        try (LocalRanks ranks = new LocalRanks(2, DataPath.NETWORK.config().netFifo(true).build())) {
            ranks.each((rank, comm) -> {
                streams[rank] = gpu.createStream();
                buffers[rank] = new DeviceBuffer[] {deviceFloats(gpu, max, rank), deviceFloats(gpu, max, -1),
                        deviceFloats(gpu, max, rank)};
            });
            ranks.each((rank, comm) -> {
                CudaStream stream = streams[rank];
                MemorySegment send = buffers[rank][0].segment();
                MemorySegment recv = buffers[rank][1].segment();
                MemorySegment inPlace = buffers[rank][2].segment();
                for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.AVG}) {
                    // value(0, i) = k and value(1, i) = 2k, k = i % 97 + 1: every result is exact
                    java.util.function.LongFunction<Float> expected = switch (op) {
                        case SUM -> i -> 3f * (i % 97 + 1);
                        case PROD -> i -> 2f * (i % 97 + 1) * (i % 97 + 1);
                        case MAX -> i -> 2f * (i % 97 + 1);
                        case MIN -> i -> (float) (i % 97 + 1);
                        default -> i -> 1.5f * (i % 97 + 1);
                    };
                    for (long count : counts) {
                        String what = op + " of " + count + " floats";
                        comm.allReduce(send, recv, count, DataType.FLOAT32, op, stream);
                        stream.synchronize();
                        assertFloats(what, read(recv, count), expected);
                        stream.copyAsync(inPlace.asSlice(0, count * 4), send.asSlice(0, count * 4));
                        comm.allReduce(inPlace, inPlace, count, DataType.FLOAT32, op, stream);
                        stream.synchronize();
                        assertFloats(what + " in place", read(inPlace, count), expected);
                    }
                }
                assertTrue(comm.usesNetworkFifo(), "the network FIFO runs (if not, the log's INIT line says why)");
                assertEquals(null, comm.asyncError());
            });
        } finally {
            closeAll(streams, buffers);
        }
    }

    @ParameterizedTest(name = "{0} ranks, {1}, network FIFO {2}")
    @MethodSource("layouts")
    void theCallReturnsOnceQueuedAndTheCollectiveRunsWhenItsStreamGetsThere(int n, DataPath path, boolean fifo) {
        CudaDevice gpu = Cuda.device(0);
        long sum = (long) n * (n + 1) / 2;
        try (LocalRanks ranks = new LocalRanks(n, path.config().netFifo(fifo).build())) {
            ranks.each((rank, comm) -> {
                try (CudaStream stream = gpu.createStream();
                     DeviceBuffer hold = gpu.allocatePinnedHost(64);
                     DeviceBuffer send = deviceFloats(gpu, COUNT, rank);
                     DeviceBuffer recv = deviceFloats(gpu, COUNT, -1)) {
                    hold.segment().set(ValueLayout.JAVA_INT, 0, 0);
                    stream.waitValueAsync(hold.segment().asSlice(0, 4), 1); // earlier work that takes its time
                    comm.allReduce(send.segment(), recv.segment(), COUNT, DataType.FLOAT32, ReduceOp.SUM, stream);
                    long queued = System.nanoTime();
                    sleepMillis(300);
                    assertFalse(stream.isIdle(), "the stream waits for the earlier work");
                    assertFloats("nothing written before the stream gets there", read(recv.segment(), COUNT), i -> 0f);
                    hold.segment().set(ValueLayout.JAVA_INT, 0, 1);
                    stream.synchronize();
                    assertTrue(System.nanoTime() - queued >= 300_000_000L);
                    assertFloats("allReduce after the earlier work", read(recv.segment(), COUNT),
                            i -> sum * (float) (i % 97 + 1));
                }
            });
        }
    }

    @ParameterizedTest(name = "{0} ranks, {1}, network FIFO {2}")
    @MethodSource("layouts")
    void hostBuffersOnAStreamAndMixedBuffersAreRefusedClearly(int n, DataPath path, boolean fifo) {
        assumeTrue(n == 2 && path == DataPath.NETWORK && fifo, "argument checks: once is enough");
        CudaDevice gpu = Cuda.device(0);
        try (LocalRanks one = new LocalRanks(1, path.config().netFifo(fifo).build());
             Arena arena = Arena.ofShared();
             CudaStream stream = gpu.createStream();
             DeviceBuffer device = gpu.allocate(4096)) {
            Communicator comm = one.comms[0];
            MemorySegment host = arena.allocate(4096);
            JcclException hostOnStream = assertThrows(JcclException.class,
                    () -> comm.allReduce(host, device.segment(), 1024, DataType.FLOAT32, ReduceOp.SUM, stream));
            assertTrue(hostOnStream.getMessage().contains("sendbuff is host memory"), hostOnStream.getMessage());
            JcclException noStream = assertThrows(JcclException.class,
                    () -> comm.allReduce(device.segment(), device.segment(), 1024, DataType.FLOAT32, ReduceOp.SUM));
            assertTrue(noStream.getMessage().contains("pass the stream"), noStream.getMessage());
            JcclException fp8 = assertThrows(JcclException.class,
                    () -> comm.allReduce(device.segment(), device.segment(), 1024, DataType.FLOAT8_E4M3, ReduceOp.SUM,
                            stream));
            assertTrue(fp8.getMessage().contains("not supported on device buffers"), fp8.getMessage());
            assertEquals(null, comm.asyncError(), "refused calls leave the communicator usable");
            comm.allReduce(device.segment(), device.segment(), 1024, DataType.FLOAT32, ReduceOp.SUM, stream);
            stream.synchronize();
        }
    }

    @ParameterizedTest(name = "{0} ranks, {1}, network FIFO {2}")
    @MethodSource("layouts")
    void aGroupOfStreamOrderedSendsReceivesAndACollectiveProgressesTogether(int n, DataPath path, boolean fifo) {
        CudaDevice gpu = Cuda.device(0);
        long sum = (long) n * (n + 1) / 2;
        CudaStream[] streams = new CudaStream[n];
        DeviceBuffer[][] buffers = new DeviceBuffer[n][];
        try (LocalRanks ranks = new LocalRanks(n, path.config().netFifo(fifo).build())) {
            ranks.each((rank, comm) -> {
                streams[rank] = gpu.createStream();
                buffers[rank] = new DeviceBuffer[] {deviceFloats(gpu, COUNT, rank), deviceFloats(gpu, COUNT, -1),
                        deviceFloats(gpu, COUNT, -1), deviceFloats(gpu, COUNT, -1)};
            });
            ranks.each((rank, comm) -> {
                CudaStream stream = streams[rank];
                MemorySegment mine = buffers[rank][0].segment();
                MemorySegment fromPrev = buffers[rank][1].segment();
                MemorySegment fromNext = buffers[rank][2].segment();
                MemorySegment reduced = buffers[rank][3].segment();
                int next = (rank + 1) % n;
                int prev = (rank + n - 1) % n;
                // Every rank sends first, both ways round the ring: only a group that puts all of them
                // in flight at once can finish this (NCCL's users write all-to-all and halo exchanges so).
                try (Group g = Group.start()) {
                    comm.send(mine, COUNT, DataType.FLOAT32, next, stream);
                    comm.send(mine, COUNT, DataType.FLOAT32, prev, stream);
                    comm.recv(fromPrev, COUNT, DataType.FLOAT32, prev, stream);
                    comm.recv(fromNext, COUNT, DataType.FLOAT32, next, stream);
                    comm.allReduce(mine, reduced, COUNT, DataType.FLOAT32, ReduceOp.SUM, stream);
                }
                stream.synchronize();
                assertFloats("recv from " + prev + " in a group", read(fromPrev, COUNT), i -> value(prev, i));
                assertFloats("recv from " + next + " in a group", read(fromNext, COUNT), i -> value(next, i));
                assertFloats("allReduce in a group", read(reduced, COUNT), i -> sum * (float) (i % 97 + 1));
                assertEquals(null, comm.asyncError());
                // After the group, the communicator's calls go on as before, on the same stream.
                comm.allReduce(mine, reduced, COUNT, DataType.FLOAT32, ReduceOp.MAX, stream);
                stream.synchronize();
                assertFloats("allReduce after the group", read(reduced, COUNT), i -> value(n - 1, i));
            });
        } finally {
            closeAll(streams, buffers);
        }
    }

    @ParameterizedTest(name = "{0} ranks, {1}, network FIFO {2}")
    @MethodSource("layouts")
    void aGroupMixingHostAndStreamOperationsOrTwoStreamsIsRefusedClearly(int n, DataPath path, boolean fifo) {
        assumeTrue(n == 2 && path == DataPath.NETWORK && fifo, "argument checks: once is enough");
        CudaDevice gpu = Cuda.device(0);
        try (LocalRanks one = new LocalRanks(1, path.config().netFifo(fifo).build());
             Arena arena = Arena.ofShared();
             CudaStream stream = gpu.createStream();
             CudaStream other = gpu.createStream();
             DeviceBuffer device = gpu.allocate(4096)) {
            Communicator comm = one.comms[0];
            MemorySegment host = arena.allocate(4096);
            MemorySegment d = device.segment();
            JcclException mixed;
            try (Group g = Group.start()) {
                comm.allReduce(d, d, 1024, DataType.FLOAT32, ReduceOp.SUM, stream);
                mixed = assertThrows(JcclException.class,
                        () -> comm.allReduceAsync(host, host, 1024, DataType.FLOAT32, ReduceOp.SUM));
            }
            assertTrue(mixed.getMessage().contains("mixes operations on host buffers"), mixed.getMessage());
            JcclException twoStreams;
            try (Group g = Group.start()) {
                comm.allReduce(d, d, 1024, DataType.FLOAT32, ReduceOp.SUM, stream);
                twoStreams = assertThrows(JcclException.class,
                        () -> comm.allReduce(d, d, 1024, DataType.FLOAT32, ReduceOp.SUM, other));
            }
            assertTrue(twoStreams.getMessage().contains("must share one CUDA stream"), twoStreams.getMessage());
            stream.synchronize();
            assertEquals(null, comm.asyncError(), "refused calls leave the communicator and its groups usable");
        }
    }

    /** Frees every rank's buffers and stream, once no rank's collective can still use them. */
    private static void closeAll(CudaStream[] streams, DeviceBuffer[][] buffers) {
        for (int r = 0; r < streams.length; r++) {
            if (buffers[r] != null) {
                for (DeviceBuffer b : buffers[r]) {
                    b.close();
                }
            }
            if (streams[r] != null) {
                streams[r].close();
            }
        }
    }

    private static void sleepMillis(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
