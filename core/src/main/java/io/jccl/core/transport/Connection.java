package io.jccl.core.transport;

import io.jccl.core.config.CoreConfig;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;

import java.lang.foreign.MemorySegment;

/**
 * One direction of a connection to one peer: a registered buffer of {@link #STEPS} slots and the
 * counters that hand them between the kernel (which fills or drains slots) and the proxy (which
 * moves them through the plugin). Slot {@code k} of the stream of steps is {@code slots[k % STEPS]}.
 *
 * <p>The proxy thread owns the counters: the host kernel runs on the same thread. Nothing here
 * allocates per message.
 */
public abstract sealed class Connection permits SendConnection, RecvConnection {
    /** {@code NCCL_STEPS}. */
    public static final int STEPS = CoreConfig.NCCL_STEPS;
    static final int MASK = STEPS - 1;

    final NetPlugin net;
    /** The peer's rank. */
    public final int peer;
    /** For messages, e.g. {@code channel 0 send to rank 1}. */
    public final String name;
    final MemorySegment buffer;
    final int slotBytes;
    final MemorySegment[] slots = new MemorySegment[STEPS];
    final NetRequest[] requests = new NetRequest[STEPS];
    final int[] testSizes = new int[8];
    MemoryHandle memoryHandle;

    Connection(NetPlugin net, int peer, String name, MemorySegment buffer, int slotBytes) {
        this.net = net;
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

    /** @return the plugin's comm */
    abstract io.jccl.spi.NetComm comm();

    /** Releases the registration and the plugin's comm. Call once the proxy no longer runs it. */
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
