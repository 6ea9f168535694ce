package io.jccl.core.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The sending direction through shared memory with a rank of the same host. The slots are the
 * receiver's buffer: the kernel writes the data straight where the peer reads it, and publishing
 * is one release store of the tail counter. No request, no copy, nothing for the proxy to move.
 */
public final class ShmSendConnection extends SendConnection {
    private final MemorySegment mapped;
    private long filled;
    /** The receiver's head as last read; re-read only when the ring looks full. */
    private long head;

    ShmSendConnection(int peer, String name, MemorySegment mapped, int slotBytes) {
        super(peer, name, ShmBuffer.slots(mapped, slotBytes), slotBytes);
        this.mapped = mapped;
    }

    @Override
    public boolean hasRoom() {
        if (filled - head < STEPS) {
            return true;
        }
        head = (long) ShmBuffer.COUNTER.getAcquire(mapped, ShmBuffer.HEAD);
        return filled - head < STEPS;
    }

    @Override
    public MemorySegment fillSlot() {
        return slots[(int) (filled & MASK)];
    }

    @Override
    public void publish(int bytes) {
        mapped.set(ValueLayout.JAVA_INT, ShmBuffer.SIZES + 4L * (filled & MASK), bytes);
        filled++;
        ShmBuffer.COUNTER.setRelease(mapped, ShmBuffer.TAIL, filled);
    }

    @Override
    public int progress() {
        return 0;
    }

    /** Published data is already in the receiver's memory. */
    @Override
    public boolean drained() {
        return true;
    }

    @Override
    public String waitingFor() {
        return "rank " + peer + " to take " + (filled - (long) ShmBuffer.COUNTER.getAcquire(mapped, ShmBuffer.HEAD))
                + " messages from shared memory on " + name;
    }

    @Override
    public String transport() {
        return "shm";
    }

    @Override
    void closeComm() {
        // The mapping belongs to the communicator's arena, which unmaps it.
    }
}
