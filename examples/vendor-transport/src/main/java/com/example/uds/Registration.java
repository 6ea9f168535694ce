package com.example.uds;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A buffer registered on one connection. Sockets need no pinning, so registering only records
 * the range and makes, once, the {@link ByteBuffer} view that the data path windows for every
 * message at no cost: that is what keeps isend and irecv free of allocation.
 */
final class Registration implements MemoryHandle {
    final UdsConnection owner;
    final long base;
    final long size;
    /** A view of the whole buffer, or null above 2 GiB (a ByteBuffer is int-indexed). */
    final ByteBuffer view;
    volatile boolean live = true;

    Registration(UdsConnection owner, MemorySegment data) throws NetException {
        if (!data.isNative()) {
            throw NetException.invalidArgument(ExampleUdsPlugin.NAME + ": regMr needs native memory, got a heap segment");
        }
        this.owner = owner;
        this.base = data.address();
        this.size = data.byteSize();
        this.view = size <= Integer.MAX_VALUE ? data.asByteBuffer() : null;
    }

    /**
     * @return the live registration of {@code comm} that {@code mhandle} is, after checking that it
     *         covers {@code data}
     * @throws NetException ncclInvalidArgument, in one line, for anything else
     */
    static Registration check(UdsConnection comm, MemoryHandle mhandle, MemorySegment data) throws NetException {
        if (!(mhandle instanceof Registration r) || r.owner != comm || !r.live) {
            throw NetException.invalidArgument(ExampleUdsPlugin.NAME + ": the memory handle is not a live registration "
                    + "of this comm (" + mhandle + ")");
        }
        long bytes = data.byteSize();
        if (bytes > Integer.MAX_VALUE) {
            throw NetException.invalidArgument(ExampleUdsPlugin.NAME + ": a " + bytes + "-byte message; the largest is "
                    + Integer.MAX_VALUE + " (maxP2pBytes is smaller still)");
        }
        long offset = data.address() - r.base;
        if (bytes > 0 && (!data.isNative() || offset < 0 || offset + bytes > r.size)) {
            throw NetException.invalidArgument(ExampleUdsPlugin.NAME + ": the buffer at 0x" + Long.toHexString(data.address())
                    + " (" + bytes + " bytes) lies outside its registration (0x" + Long.toHexString(r.base) + ", "
                    + r.size + " bytes)");
        }
        return r;
    }

    @Override
    public String toString() {
        return "ExampleUds registration 0x" + Long.toHexString(base) + "+" + size;
    }
}
