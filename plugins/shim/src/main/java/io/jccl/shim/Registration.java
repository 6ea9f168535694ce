package io.jccl.shim;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.SpiArrays;

import java.lang.foreign.MemorySegment;

/**
 * A buffer NCCL registered: the transport's {@link MemoryHandle}, the registered range, and the
 * segments data calls hand the transport for sub-ranges of it.
 *
 * <p>NCCL sends and receives from the same few steps of its protocol buffers over and over, so the
 * segment of an (address, size) pair is kept in a small direct-mapped cache: the steady state of a
 * connection creates no segment per message. A miss makes one slice and replaces the entry. Races
 * between threads on the cache are harmless: segments are immutable, and every hit is checked.
 */
final class Registration {
    private static final int CACHE = 64;

    final BridgedComm owner;
    final MemoryHandle handle;
    final MemorySegment region;
    final long handleValue;
    private final long base;
    private final long size;
    private final MemorySegment[] slices = new MemorySegment[CACHE];

    Registration(BridgedComm owner, MemoryHandle handle, MemorySegment region, long handleValue) {
        this.owner = owner;
        this.handle = handle;
        this.region = region;
        this.handleValue = handleValue;
        this.base = region.address();
        this.size = region.byteSize();
    }

    /**
     * @return the segment {@code [address, address + bytes)}, which must lie inside this registration
     * @throws NetException {@code ncclInvalidArgument} if it does not
     */
    MemorySegment slice(long address, long bytes) throws NetException {
        int i = (int) ((address >>> 6 ^ address >>> 18 ^ bytes ^ bytes >>> 12) & (CACHE - 1));
        MemorySegment s = slices[i];
        if (s != null && s.address() == address && s.byteSize() == bytes) {
            return s;
        }
        long offset = address - base;
        if (bytes < 0 || offset < 0 || offset > size || bytes > size - offset) {
            if (bytes == 0) {
                return region.asSlice(0, 0);
            }
            throw NetException.invalidArgument("buffer [0x" + Long.toHexString(address) + ", +" + bytes
                    + ") is not inside its registration [0x" + Long.toHexString(base) + ", +" + size + ")");
        }
        s = region.asSlice(offset, bytes);
        SpiArrays.set(slices, i, s);
        return s;
    }
}
