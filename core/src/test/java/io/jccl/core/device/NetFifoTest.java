package io.jccl.core.device;

import io.jccl.core.transport.Connection;
import io.jccl.core.transport.NetConnectionPair;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.discovery.NetPluginDiscovery;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The network FIFO's proxy on the CPU: two ranks in this process, each with its two regions in
 * plain memory, connected through JcclSocket, and in place of each GPU kernel a thread that keeps
 * {@code ring.cu}'s side of the protocol (wait for the head before reusing a send slot, write the
 * slot and its size, advance the outbox's tail; wait for our tail, read the slot, advance the
 * outbox's head). What the GPU adds (PCIe, the kernel itself) is checked on the GPU machine by
 * {@code DeviceCollectivesTest}; the step counts the proxy expects are held against the kernel's
 * loop here too.
 */
class NetFifoTest {
    private static final VarHandle COUNTER = ValueLayout.JAVA_LONG.varHandle();
    private static NetPlugin net;
    private static final java.util.concurrent.Executor NEW_THREAD = task -> {
        Thread t = new Thread(task, "test-kernel");
        t.setDaemon(true);
        t.start();
    };

    @BeforeAll
    static void socket() throws Exception {
        net = NetPluginDiscovery.load().findNet("JcclSocket").orElseThrow();
        net.init(NetLogger.noop());
    }

    @AfterAll
    static void closeSocket() throws Exception {
        net.close();
    }

    /** Rank {@code rank}'s byte {@code i} of step {@code step}. */
    private static byte pattern(int rank, long step, int i) {
        return (byte) (rank * 31 + step * 7 + i);
    }

    private static int sizeOf(long step) {
        return (int) (1 + (step * 40_503L) % PeerRing.SLOT_BYTES); // 1 byte to a full slot
    }

    /** Two ranks, one channel each way: rank r sends to 1-r over its outbox, receives into its own region. */
    private static final class TwoRanks implements AutoCloseable {
        final Arena arena = Arena.ofShared();
        final MemorySegment[] mine = new MemorySegment[2];
        final MemorySegment[] outbox = new MemorySegment[2];
        final NetFifo[] fifo = new NetFifo[2];
        final CountDownLatch[] stopped = {new CountDownLatch(1), new CountDownLatch(1)};

        TwoRanks() throws Exception {
            for (int r = 0; r < 2; r++) {
                mine[r] = arena.allocate(NetFifo.regionBytes(1), 4096);
                outbox[r] = arena.allocate(NetFifo.regionBytes(1), 4096);
            }
            NetConnectionPair zeroToOne = NetConnectionPair.connect(net, 0, 1, NetFifo.fifo(outbox[0], 0),
                    NetFifo.fifo(mine[1], 0), PeerRing.SLOT_BYTES);
            NetConnectionPair oneToZero = NetConnectionPair.connect(net, 1, 0, NetFifo.fifo(outbox[1], 0),
                    NetFifo.fifo(mine[0], 0), PeerRing.SLOT_BYTES);
            List<List<Connection>> connections = List.of(List.of(oneToZero.recv(), zeroToOne.send()),
                    List.of(zeroToOne.recv(), oneToZero.send()));
            for (int r = 0; r < 2; r++) {
                int rank = r;
                fifo[r] = NetFifo.start(1, mine[r], outbox[r], connections.get(r), stopped[rank]::countDown,
                        "test-fifo-proxy-r" + r);
            }
        }

        @Override
        public void close() {
            for (NetFifo f : fifo) {
                f.close();
            }
            arena.close();
        }
    }

    /**
     * ring.cu's side of the protocol for {@code steps} steps, each a send then a receive, as an all-reduce
     * of two ranks interleaves them. Returns early (false) when {@code stop} fires.
     */
    private static boolean kernel(TwoRanks t, int rank, long steps, CountDownLatch stop) {
        MemorySegment mine = t.mine[rank];
        MemorySegment outbox = t.outbox[rank];
        for (long step = 0; step < steps; step++) {
            // Send: the slot is free once the proxy says the transport sent what was in it before.
            while ((long) COUNTER.getAcquire(mine, 64L) < step - PeerRing.SLOTS + 1) {
                if (stop.getCount() == 0) {
                    return false;
                }
                Thread.onSpinWait();
            }
            int slot = (int) (step % PeerRing.SLOTS);
            MemorySegment out = NetFifo.fifo(outbox, 0).asSlice((long) slot * PeerRing.SLOT_BYTES, PeerRing.SLOT_BYTES);
            int size = sizeOf(step);
            for (int i = 0; i < size; i++) {
                out.set(ValueLayout.JAVA_BYTE, i, pattern(rank, step, i));
            }
            outbox.set(ValueLayout.JAVA_INT, 192 + 4L * slot, size);
            COUNTER.setRelease(outbox, 0L, step + 1);
            // Receive: the peer's step, checked byte for byte, then the slot goes back to the proxy.
            while ((long) COUNTER.getAcquire(mine, 0L) < step + 1) {
                if (stop.getCount() == 0) {
                    return false;
                }
                Thread.onSpinWait();
            }
            MemorySegment in = NetFifo.fifo(mine, 0).asSlice((long) slot * PeerRing.SLOT_BYTES, PeerRing.SLOT_BYTES);
            int peer = 1 - rank;
            int expected = sizeOf(step);
            for (int i = 0; i < expected; i++) {
                if (in.get(ValueLayout.JAVA_BYTE, i) != pattern(peer, step, i)) {
                    throw new AssertionError("rank " + rank + " step " + step + " byte " + i + " is not rank " + peer
                            + "'s");
                }
            }
            COUNTER.setRelease(outbox, 64L, step + 1);
        }
        return true;
    }

    @Test
    void required_everySlotCrossesInOrderAndTheProxyPostsExactlyTheStepsTheCallsAnnounce() throws Exception {
        try (TwoRanks t = new TwoRanks()) {
            // Two calls of an all-reduce each: 2 x (2n - 2) steps a round, several rounds a call.
            long count = 3L * PeerRing.SLOT_BYTES / 4 + 5; // float32 elements: 2 rounds, the last one short
            long[] sends = new long[1];
            long[] recvs = new long[1];
            NetFifo.countSteps(PeerRing.ALL_REDUCE, 0, count, 4, 2, 0, 1, sends, recvs);
            assertEquals(sends[0], recvs[0]);
            long steps = 2 * sends[0] + 40;
            for (int r = 0; r < 2; r++) {
                t.fifo[r].expect(PeerRing.ALL_REDUCE, 0, count, 4, 2, r, 1);
                t.fifo[r].expect(PeerRing.ALL_REDUCE, 0, count, 4, 2, r, 1);
                t.fifo[r].expect(PeerRing.ALL_GATHER, 0, 20L * PeerRing.SLOT_BYTES, 1, 2, r, 1); // 20 more
                t.fifo[r].expect(PeerRing.ALL_GATHER, 0, 20L * PeerRing.SLOT_BYTES, 1, 2, r, 1);
            }
            CountDownLatch giveUp = new CountDownLatch(1);
            try {
                // A thread each: the common pool may have one worker on a small machine.
                CompletableFuture<Boolean> zero = CompletableFuture.supplyAsync(() -> kernel(t, 0, steps, giveUp), NEW_THREAD);
                CompletableFuture<Boolean> one = CompletableFuture.supplyAsync(() -> kernel(t, 1, steps, giveUp), NEW_THREAD);
                // If this times out, check that the proxy posts receives for every announced step (expect).
                assertTrue(zero.get(60, TimeUnit.SECONDS), "rank 0's kernel finished");
                assertTrue(one.get(60, TimeUnit.SECONDS), "rank 1's kernel finished");
            } finally {
                giveUp.countDown();
            }
            for (int r = 0; r < 2; r++) {
                assertNull(t.fifo[r].failure(), "rank " + r);
                assertEquals(1, t.stopped[r].getCount(), "rank " + r + "'s kernels were not stopped");
            }
        }
    }

    @Test
    void required_aPeerThatGoesAwayStopsTheKernelsAndLeavesAOneLineFailure() throws Exception {
        try (TwoRanks t = new TwoRanks()) {
            for (int r = 0; r < 2; r++) {
                t.fifo[r].expect(PeerRing.ALL_GATHER, 0, 64L * PeerRing.SLOT_BYTES, 1, 2, r, 1);
            }
            // Rank 1 makes 3 steps of 64, then its proxy and connections go away (a process that died).
            CompletableFuture<Boolean> zero = CompletableFuture.supplyAsync(() -> kernel(t, 0, 64, t.stopped[0]), NEW_THREAD);
            kernel(t, 1, 3, new CountDownLatch(1));
            t.fifo[1].close();
            // If this times out, check that NetFifo's proxy catches the transport's failure and runs stopKernels.
            assertTrue(t.stopped[0].await(30, TimeUnit.SECONDS), "rank 0's kernels stopped within the bound");
            assertEquals(false, zero.get(10, TimeUnit.SECONDS), "rank 0's kernel gave up");
            String why = t.fifo[0].failure();
            assertNotNull(why);
            assertTrue(why.startsWith("the network FIFO of a device collective failed: ") && !why.contains("\n"), why);
        }
    }

    /**
     * The counts of {@link NetFifo#countSteps} against a walk of {@code ring_collective} call by call
     * (scatter start, own chunk, gather rest), for every kind, rank, root and many sizes.
     */
    @Test
    void required_theStepCountsAreTheKernelsLoop() {
        int[] elementSizes = {1, 2, 4, 8};
        long[] counts = {1, 15, 16, 17, 1000, 65_536, 65_537, 262_147, 3_000_001};
        for (int kind = PeerRing.ALL_REDUCE; kind <= PeerRing.ALL_REDUCE_PAIR; kind++) {
            for (int n = 2; n <= (kind == PeerRing.ALL_REDUCE_PAIR ? 2 : 5); n++) {
                for (int rank = 0; rank < n; rank++) {
                    for (int root = 0; root < n; root++) {
                        for (int size : elementSizes) {
                            for (long count : counts) {
                                for (int grid : new int[] {1, 3, 4}) {
                                    long[] sends = new long[grid];
                                    long[] recvs = new long[grid];
                                    NetFifo.countSteps(kind, root, count, size, n, rank, grid, sends, recvs);
                                    for (int c = 0; c < grid; c++) {
                                        long[] walked = walk(kind, root, count, size, n, rank, grid, c);
                                        String at = "kind " + kind + " n " + n + " rank " + rank + " root " + root
                                                + " size " + size + " count " + count + " grid " + grid + " channel " + c;
                                        assertEquals(walked[0], sends[c], "sends, " + at);
                                        assertEquals(walked[1], recvs[c], "receives, " + at);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /** ring.cu's ring_collective for one block, step by step: {sends, receives}. */
    private static long[] walk(int kind, int root, long count, int size, int n, int rank, int grid, int ch) {
        long[] steps = new long[2];
        long align = Math.max(1, 16 / size);
        long slotElements = PeerRing.SLOT_BYTES / size;
        long per = (count + grid - 1) / grid;
        per = (per + align - 1) / align * align;
        long begin = Math.min(count, ch * per);
        long end = Math.min(count, begin + per);
        boolean split = kind == PeerRing.ALL_REDUCE;
        for (long at = begin; at < end; ) {
            long left = end - at;
            long chunk = split ? (left + n - 1) / n : left;
            chunk = Math.min(slotElements, (chunk + align - 1) / align * align);
            switch (kind) {
                case PeerRing.ALL_REDUCE -> {
                    scatterStart(steps, n);
                    step(steps, true, true);
                    gatherRest(steps, n);
                }
                case PeerRing.REDUCE_SCATTER -> {
                    scatterStart(steps, n);
                    step(steps, true, false);
                }
                case PeerRing.ALL_GATHER -> {
                    step(steps, false, true);
                    gatherRest(steps, n);
                }
                case PeerRing.ALL_REDUCE_PAIR -> {
                    step(steps, false, true);
                    step(steps, true, false);
                }
                case PeerRing.BROADCAST -> {
                    int position = Math.floorMod(rank - root, n);
                    if (position == 0) {
                        step(steps, false, true);
                    } else {
                        step(steps, true, position < n - 1);
                    }
                }
                default -> {
                    int position = Math.floorMod(rank - root - 1, n);
                    step(steps, position > 0, position < n - 1);
                }
            }
            at += split ? Math.min(left, chunk * n) : Math.min(left, chunk);
        }
        return steps;
    }

    private static void scatterStart(long[] steps, int n) {
        step(steps, false, true);
        for (int j = 2; j < n; j++) {
            step(steps, true, true);
        }
    }

    private static void gatherRest(long[] steps, int n) {
        for (int j = 1; j < n - 1; j++) {
            step(steps, true, true);
        }
        step(steps, true, false);
    }

    private static void step(long[] steps, boolean recv, boolean send) {
        steps[0] += send ? 1 : 0;
        steps[1] += recv ? 1 : 0;
    }
}
