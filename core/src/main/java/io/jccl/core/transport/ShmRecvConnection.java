package io.jccl.core.transport;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * The receiving direction through shared memory with a rank of the same host: this rank made the
 * buffer ({@link ShmBuffer}); a slot holds data once the sender's tail counter passes it, and
 * consuming it is one release store of the head counter.
 */
public final class ShmRecvConnection extends RecvConnection {
    private final MemorySegment mapped;
    private final Path file;
    private long consumed;
    /** The sender's tail as last read; re-read only when no known slot is left. */
    private long tail;

    ShmRecvConnection(int peer, String name, MemorySegment mapped, int slotBytes, Path file) {
        super(peer, name, ShmBuffer.slots(mapped, slotBytes), slotBytes);
        this.mapped = mapped;
        this.file = file;
    }

    /** Shared memory needs no receive posted ahead. */
    @Override
    public void expect(long steps) {
    }

    @Override
    public boolean hasData() {
        if (tail > consumed) {
            return true;
        }
        tail = (long) ShmBuffer.COUNTER.getAcquire(mapped, ShmBuffer.TAIL);
        return tail > consumed;
    }

    @Override
    public MemorySegment dataSlot() {
        return slots[(int) (consumed & MASK)];
    }

    @Override
    public int dataSize() {
        return mapped.get(ValueLayout.JAVA_INT, ShmBuffer.SIZES + 4L * (consumed & MASK));
    }

    @Override
    public void consume() {
        consumed++;
        ShmBuffer.COUNTER.setRelease(mapped, ShmBuffer.HEAD, consumed);
    }

    @Override
    public int progress() {
        return 0;
    }

    @Override
    public boolean drained() {
        return true;
    }

    @Override
    public String waitingFor() {
        return "data from rank " + peer + " in shared memory on " + name + " (" + consumed + " messages taken)";
    }

    @Override
    public String transport() {
        return "shm";
    }

    @Override
    void closeComm() {
        ShmBuffer.deleteQuietly(file);
    }
}
