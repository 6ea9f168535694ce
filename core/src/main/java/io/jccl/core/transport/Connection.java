package io.jccl.core.transport;

import io.jccl.core.config.CoreConfig;
import io.jccl.spi.NetException;

import java.lang.foreign.MemorySegment;

/**
 * One direction of a connection to one peer: a buffer of {@link #STEPS} slots and the counters
 * that hand them between the kernel (which fills or drains slots) and the transport. Slot
 * {@code k} of the stream of steps is {@code slots[k % STEPS]}. Two transports move slots (NCCL
 * has the same two for host memory): the network plugin ({@code Net*Connection}, the proxy posts
 * and tests requests) and shared memory between ranks of one host ({@code Shm*Connection}, the
 * slots are the peer's memory and the counters live beside them).
 *
 * <p>Whoever runs the proxy's duty cycle owns the local counters: the host kernel runs on the
 * same thread. Nothing here allocates per message.
 */
public abstract sealed class Connection permits SendConnection, RecvConnection {
    /** {@code NCCL_STEPS}. */
    public static final int STEPS = CoreConfig.NCCL_STEPS;
    static final int MASK = STEPS - 1;

    /** The peer's rank. */
    public final int peer;
    /** For messages, e.g. {@code channel 0 send to rank 1}. */
    public final String name;
    final MemorySegment buffer;
    final int slotBytes;
    final MemorySegment[] slots = new MemorySegment[STEPS];

    Connection(int peer, String name, MemorySegment buffer, int slotBytes) {
        this.peer = peer;
        this.name = name;
        this.buffer = buffer;
        this.slotBytes = slotBytes;
        for (int i = 0; i < STEPS; i++) {
            slots[i] = buffer.asSlice((long) i * slotBytes, slotBytes);
        }
    }

    /** @return bytes per slot: the largest message on this connection */
    public int slotBytes() {
        return slotBytes;
    }

    /** @return {@code "net"} or {@code "shm"}, for logs */
    public abstract String transport();

    /**
     * Moves what can move now: posts and tests requests. Proxy thread; never blocks.
     *
     * @return how much changed (0 when nothing could move)
     * @throws NetException if the plugin reports a failure
     */
    public abstract int progress() throws NetException;

    /** @return whether no request is in flight and the kernel has left nothing for the proxy */
    public abstract boolean drained();

    /** @return what the connection waits for, for a timeout message */
    public abstract String waitingFor();

    /** Releases what the transport holds. Call once the proxy no longer runs it. */
    abstract void closeComm() throws NetException;

    /** Releases the connection, keeping the first failure. */
    public void close() {
        try {
            closeComm();
        } catch (NetException | RuntimeException e) {
            // Closing is best effort: the comm is gone either way, and its peer sees that.
        }
    }
}
