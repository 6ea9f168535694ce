package io.jccl.core.device;

import io.jccl.core.transport.Connection;
import io.jccl.core.transport.NetRecvConnection;
import io.jccl.core.transport.NetSendConnection;
import io.jccl.spi.NetException;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The network side of a ring of GPU kernels: NCCL's kernel-and-proxy FIFO (spec sections 9 to 11).
 * The kernel is {@code ring.cu}'s, unchanged; what differs from the P2P ring is where its neighbours'
 * memory is. Two regions of pinned host memory, which the GPU reads and writes over the bus, hold
 * per channel the counters and {@link PeerRing#SLOTS} slots of {@link PeerRing#SLOT_BYTES}:
 * <ul>
 *   <li>{@code mine} (the kernel's own region): the receive FIFO, which the transport fills; the
 *       proxy advances its tail when a message has landed in a slot, and its head when the transport
 *       has sent a slot of the send FIFO (the slot is free again).</li>
 *   <li>{@code outbox} (the kernel's "next" and "previous" rank): the send FIFO, which the kernel
 *       fills, advancing the outbox's tail and writing each slot's size beside it; and the head the
 *       kernel advances after it has read a receive slot, which lets the proxy receive into it again.</li>
 * </ul>
 * The proxy is a thread of this ring: per channel it hands the kernel's published slots to the
 * network connection to the next rank ({@link NetSendConnection}) and the slots that arrived on
 * the one from the previous rank ({@link NetRecvConnection}) back, posting receives ahead as far as
 * the calls queued so far will take ({@link #expect}, counted as the kernel counts its steps).
 * Nothing on that loop allocates. A transport failure stops the kernels (the ring's control word)
 * and is kept for {@link #failure()}; a frozen peer ends there too, through the transport's own
 * bound or the kernel's timeout.
 */
public final class NetFifo implements AutoCloseable {
    private static final VarHandle COUNTER = ValueLayout.JAVA_LONG.varHandle();
    private static final long TAIL = 0;
    private static final long HEAD = 64;
    private static final long SIZES = 192;

    private final int channels;
    private final MemorySegment mine;
    private final MemorySegment outbox;
    private final NetSendConnection[] sends;
    private final NetRecvConnection[] recvs;
    private final List<Connection> connections;
    /** Stops the ring's kernels (its control word). */
    private final Runnable stopKernels;
    /** Steps the queued calls make, per channel, cumulative: written by callers, read by the proxy. */
    private final AtomicLongArray sendTarget;
    private final AtomicLongArray recvTarget;
    // The proxy thread's own counts per channel.
    private final long[] published;
    private final long[] expected;
    private final long[] consumed;
    private final long[] headWritten;
    private final long[] tailWritten;
    // Scratch of expect(), under its lock.
    private final long[] stepSends;
    private final long[] stepRecvs;
    private final Thread proxy;
    private volatile boolean closing;
    private volatile String failure;

    private NetFifo(int channels, MemorySegment mine, MemorySegment outbox, List<Connection> connections,
                    Runnable stopKernels, String threadName) {
        this.channels = channels;
        this.mine = mine;
        this.outbox = outbox;
        this.connections = connections;
        this.stopKernels = stopKernels;
        this.sends = new NetSendConnection[channels];
        this.recvs = new NetRecvConnection[channels];
        for (int c = 0; c < channels; c++) {
            recvs[c] = (NetRecvConnection) connections.get(2 * c);
            sends[c] = (NetSendConnection) connections.get(2 * c + 1);
        }
        sendTarget = new AtomicLongArray(channels);
        recvTarget = new AtomicLongArray(channels);
        published = new long[channels];
        expected = new long[channels];
        consumed = new long[channels];
        headWritten = new long[channels];
        tailWritten = new long[channels];
        stepSends = new long[channels];
        stepRecvs = new long[channels];
        proxy = new Thread(this::run, threadName);
        proxy.setDaemon(true);
    }

    /** @return bytes of a region (counters, then the FIFOs) for {@code channels} channels */
    static long regionBytes(int channels) {
        return PeerRing.FIFO_OFFSET + (long) channels * PeerRing.SLOTS * PeerRing.SLOT_BYTES;
    }

    /** @return channel {@code c}'s slots in {@code slots}, a buffer of the FIFOs alone (GPU memory, GPUDirect) */
    static MemorySegment slots(MemorySegment slots, int c) {
        return slots.asSlice((long) c * PeerRing.SLOTS * PeerRing.SLOT_BYTES, (long) PeerRing.SLOTS * PeerRing.SLOT_BYTES);
    }

    /** @return channel {@code c}'s FIFO in {@code region}: where its connection's slots are */
    static MemorySegment fifo(MemorySegment region, int c) {
        return region.asSlice(PeerRing.FIFO_OFFSET + (long) c * PeerRing.SLOTS * PeerRing.SLOT_BYTES,
                (long) PeerRing.SLOTS * PeerRing.SLOT_BYTES);
    }

    /**
     * Starts the proxy over connections already made.
     *
     * @param connections per channel the receiving connection from the previous rank, then the sending
     *                    one to the next, made over {@link #fifo} of {@code mine} and of {@code outbox}
     */
    static NetFifo start(int channels, MemorySegment mine, MemorySegment outbox, List<Connection> connections,
                         Runnable stopKernels, String threadName) {
        NetFifo f = new NetFifo(channels, mine, outbox, connections, stopKernels, threadName);
        f.proxy.start();
        return f;
    }

    /**
     * Announces a call the ring's kernel is about to run: the proxy posts the receives its steps will
     * take. Arguments as the kernel's.
     */
    synchronized void expect(int kind, int root, long count, int elementSize, int nranks, int rank, int grid) {
        countSteps(kind, root, count, elementSize, nranks, rank, grid, stepSends, stepRecvs);
        for (int c = 0; c < grid; c++) {
            sendTarget.addAndGet(c, stepSends[c]);
            recvTarget.addAndGet(c, stepRecvs[c]);
        }
        LockSupport.unpark(proxy);
    }

    /**
     * The steps (slots sent and received) each channel's block makes for one call: {@code ring.cu}'s
     * {@code ring_collective} loop, counted without moving data. A test holds the two together.
     */
    static void countSteps(int kind, int root, long count, int elementSize, int nranks, int rank, int grid,
                           long[] sends, long[] recvs) {
        long align = Math.max(1, 16 / elementSize);
        long slotElements = PeerRing.SLOT_BYTES / elementSize;
        long per = (count + grid - 1) / grid;
        per = (per + align - 1) / align * align;
        boolean split = kind == PeerRing.ALL_REDUCE;
        long sendsPerRound;
        long recvsPerRound;
        switch (kind) {
            case PeerRing.ALL_REDUCE -> {
                sendsPerRound = 2L * nranks - 2;
                recvsPerRound = 2L * nranks - 2;
            }
            case PeerRing.REDUCE_SCATTER, PeerRing.ALL_GATHER -> {
                sendsPerRound = nranks - 1;
                recvsPerRound = nranks - 1;
            }
            case PeerRing.ALL_REDUCE_PAIR -> {
                sendsPerRound = 1;
                recvsPerRound = 1;
            }
            case PeerRing.BROADCAST -> {
                int position = Math.floorMod(rank - root, nranks); // 0: the root
                sendsPerRound = position < nranks - 1 ? 1 : 0;
                recvsPerRound = position > 0 ? 1 : 0;
            }
            case PeerRing.REDUCE -> {
                int position = Math.floorMod(rank - root - 1, nranks); // n-1: the root
                sendsPerRound = position < nranks - 1 ? 1 : 0;
                recvsPerRound = position > 0 ? 1 : 0;
            }
            default -> throw new IllegalArgumentException("kind " + kind);
        }
        for (int c = 0; c < grid; c++) {
            long begin = Math.min(count, c * per);
            long end = Math.min(count, begin + per);
            long rounds = 0;
            for (long at = begin; at < end; ) {
                long left = end - at;
                long chunk = split ? (left + nranks - 1) / nranks : left;
                chunk = Math.min(slotElements, (chunk + align - 1) / align * align);
                rounds++;
                at += split ? Math.min(left, chunk * nranks) : Math.min(left, chunk);
            }
            sends[c] = rounds * sendsPerRound;
            recvs[c] = rounds * recvsPerRound;
        }
    }

    /** The proxy's duty cycle: spins while calls are in flight, backs off, then parks when none is. */
    private void run() {
        int idle = 0;
        try {
            while (!closing && failure == null) {
                int work = 0;
                for (int c = 0; c < channels; c++) {
                    work += progress(c);
                }
                if (work > 0) {
                    idle = 0;
                } else if (!outstanding()) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                } else if (++idle < 10_000) {
                    Thread.onSpinWait();
                } else if (idle < 11_000) {
                    Thread.yield();
                } else {
                    LockSupport.parkNanos(20_000);
                }
            }
        } catch (NetException | RuntimeException e) {
            failure = "the network FIFO of a device collective failed: " + e.getMessage();
            stopKernels.run();
        }
    }

    private int progress(int c) throws NetException {
        long base = (long) c * PeerRing.CHANNEL_STRIDE;
        MemorySegment out = outbox;
        MemorySegment in = mine;
        int work = 0;
        // Kernel to network: every slot the kernel published goes to the send connection.
        long tail = (long) COUNTER.getAcquire(out, base + TAIL);
        NetSendConnection send = sends[c];
        while (published[c] < tail) {
            int bytes = out.get(ValueLayout.JAVA_INT, base + SIZES + 4L * (published[c] % PeerRing.SLOTS));
            send.publish(bytes);
            published[c]++;
            work++;
        }
        work += send.progress();
        long sent = send.completed();
        if (sent != headWritten[c]) {
            COUNTER.setRelease(in, base + HEAD, sent);
            headWritten[c] = sent;
        }
        // Network to kernel: receives posted as far as queued calls go, slots freed as the kernel reads.
        NetRecvConnection recv = recvs[c];
        long target = recvTarget.get(c);
        if (target > expected[c]) {
            recv.expect(target - expected[c]);
            expected[c] = target;
        }
        long read = (long) COUNTER.getAcquire(out, base + HEAD);
        while (consumed[c] < read) {
            recv.consume();
            consumed[c]++;
        }
        work += recv.progress();
        long arrived = recv.received();
        if (arrived != tailWritten[c]) {
            COUNTER.setRelease(in, base + TAIL, arrived);
            tailWritten[c] = arrived;
        }
        return work;
    }

    /** @return whether a queued call still has a slot to send or receive */
    private boolean outstanding() {
        for (int c = 0; c < channels; c++) {
            if (sends[c].completed() < sendTarget.get(c) || consumed[c] < recvTarget.get(c)) {
                return true;
            }
        }
        return false;
    }

    /** @return why the proxy stopped (the ring's output incomplete), or null */
    String failure() {
        return failure;
    }

    /** @return the connections' descriptions, for the log */
    String describe() {
        StringBuilder b = new StringBuilder();
        for (int c = 0; c < channels; c++) {
            b.append(c == 0 ? "" : "; ").append(sends[c].name).append(", ").append(recvs[c].name);
        }
        return b.toString();
    }

    /**
     * Stops the proxy and closes the connections. The regions are the ring's to free, once its
     * kernels have ended.
     */
    @Override
    public synchronized void close() {
        if (closing) {
            return;
        }
        closing = true;
        LockSupport.unpark(proxy);
        try {
            proxy.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (proxy.isAlive()) {
            return; // stuck in a plugin call: closing its comms under it could crash a native plugin
        }
        for (Connection c : connections) {
            c.close();
        }
    }
}
