package io.jccl.core.transport;

import java.lang.foreign.MemorySegment;

/**
 * The receiving direction, as the kernel sees it: operations announce how many messages they
 * will take ({@link #expect}); while {@link #hasData()}, the kernel reads {@link #dataSlot()} and
 * then {@link #consume}s it, which lets the transport fill that slot again.
 */
public abstract sealed class RecvConnection extends Connection permits NetRecvConnection, ShmRecvConnection {

    RecvConnection(int peer, String name, MemorySegment buffer, int slotBytes) {
        super(peer, name, buffer, slotBytes);
    }

    /** Announces {@code steps} more messages that queued operations will consume. Proxy thread. */
    public abstract void expect(long steps);

    /** @return whether a received slot waits for the kernel */
    public abstract boolean hasData();

    /** @return the oldest received slot; valid while {@link #hasData()} */
    public abstract MemorySegment dataSlot();

    /** @return bytes received in {@link #dataSlot()} */
    public abstract int dataSize();

    /** The kernel is done with {@link #dataSlot()}: the transport may fill it again. */
    public abstract void consume();
}
