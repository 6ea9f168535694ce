package io.jccl.core.transport;

import java.lang.foreign.MemorySegment;

/**
 * The sending direction, as the kernel sees it: it fills the slot {@link #fillSlot()} returns
 * while {@link #hasRoom()}, then {@link #publish}es it; the transport delivers published slots in
 * order and frees them for the kernel again.
 */
public abstract sealed class SendConnection extends Connection permits NetSendConnection, ShmSendConnection {

    SendConnection(int peer, String name, MemorySegment buffer, int slotBytes) {
        super(peer, name, buffer, slotBytes);
    }

    /** @return whether a slot is free for the kernel to fill */
    public abstract boolean hasRoom();

    /** @return the slot the kernel fills next; valid while {@link #hasRoom()} */
    public abstract MemorySegment fillSlot();

    /** Hands the filled slot to the transport. @param bytes how much of it to send */
    public abstract void publish(int bytes);
}
