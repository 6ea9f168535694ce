package io.jccl.core.transport;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.PointerType;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The caller's host buffers that one network connection moves bytes straight from or into, instead
 * of through its slots: registered with the transport on first use ({@code regMr}) and kept in a
 * small cache, and the slices of them handed to the transport, kept in a table by address so that
 * operations repeating the same ranges allocate nothing per message.
 *
 * <p>A registration is dropped (oldest first) only once the connection's messages that used it are
 * complete, when its memory was freed, and when the connection closes. Used by the thread that
 * drives the connection's proxy.
 */
final class UserBuffers {
    /** Buffers registered at once per connection: an operation's input and output, and the last operation's. */
    static final int REGISTRATIONS = 4;
    /** The slice table's first size, and its largest: 8192 slices of 512 KiB slots cover 4 GiB of user buffers. */
    static final int MIN_SLICES = 64;
    static final int MAX_SLICES = 8192;

    private final NetPlugin net;
    private final NetComm comm;
    private final MemorySegment[] registered = new MemorySegment[REGISTRATIONS];
    private final MemoryHandle[] registrations = new MemoryHandle[REGISTRATIONS];
    /** Per registration: the connection's message count after the last message that used it. */
    private final long[] lastUse = new long[REGISTRATIONS];
    private int next;
    private long[] sliceAddresses = new long[MIN_SLICES];
    private MemorySegment[] slices = new MemorySegment[MIN_SLICES];
    private int sliceCount;
    private boolean allowed;

    UserBuffers(NetPlugin net, NetComm comm) {
        this.net = net;
        this.comm = comm;
    }

    void allow() {
        allowed = true;
    }

    /**
     * @param buffer   host memory the caller owns
     * @param complete the connection's messages complete so far: registrations used only by those may go
     * @return the registration covering {@code buffer}, made if needed; {@code null} when not allowed,
     *         for a heap segment (its address is an offset into an array the GC may move, so neither
     *         a registration nor this cache's address keys apply), when every registration is still in
     *         use, or when the transport refused (then it stops asking)
     */
    MemoryHandle handle(MemorySegment buffer, long complete) {
        if (!allowed || buffer.byteSize() == 0 || !buffer.isNative()) {
            return null;
        }
        long start = buffer.address();
        long end = start + buffer.byteSize();
        int free = -1;
        for (int i = 0; i < REGISTRATIONS; i++) {
            MemorySegment r = registered[i];
            if (r != null && !r.scope().isAlive() && complete >= lastUse[i]) {
                drop(i);
                r = null;
            }
            if (r == null) {
                free = free < 0 ? i : free;
            } else if (r.scope().equals(buffer.scope()) && r.address() <= start && end <= r.address() + r.byteSize()) {
                return registrations[i];
            }
        }
        for (int k = 0; k < REGISTRATIONS && free < 0; k++) {
            int i = (next + k) % REGISTRATIONS;
            if (complete >= lastUse[i]) {
                drop(i);
                free = i;
            }
        }
        if (free < 0) {
            return null;
        }
        try {
            registrations[free] = net.regMr(comm, buffer, PointerType.HOST);
        } catch (NetException | RuntimeException e) {
            allowed = false;
            return null;
        }
        registered[free] = buffer;
        lastUse[free] = 0;
        next = (free + 1) % REGISTRATIONS;
        return registrations[free];
    }

    /** Notes that message number {@code count} (1-based) of the connection uses {@code handle}. */
    void used(MemoryHandle handle, long count) {
        for (int i = 0; i < REGISTRATIONS; i++) {
            if (registrations[i] == handle) {
                lastUse[i] = count;
            }
        }
    }

    private void drop(int i) {
        // Its slices go too: the table would otherwise keep freed memory's segments reachable.
        Arrays.fill(slices, null);
        sliceCount = 0;
        MemoryHandle h = registrations[i];
        registered[i] = null;
        registrations[i] = null;
        if (h != null) {
            try {
                net.deregMr(comm, h);
            } catch (NetException | RuntimeException e) {
                allowed = false;
            }
        }
    }

    /** Releases every registration (the connection is closing). */
    void close() {
        for (int i = 0; i < REGISTRATIONS; i++) {
            if (registrations[i] != null) {
                drop(i);
            }
        }
    }

    /** A slice of {@code buffer}, reused when an earlier message had the same range of the same memory. */
    MemorySegment slice(MemorySegment buffer, long offset, int bytes) {
        long address = buffer.address() + offset;
        int mask = slices.length - 1;
        int i = spread(address) & mask;
        while (slices[i] != null) {
            if (sliceAddresses[i] == address) {
                MemorySegment m = slices[i];
                if (m.byteSize() == bytes && m.scope().equals(buffer.scope())) {
                    return m;
                }
                m = buffer.asSlice(offset, bytes);
                slices[i] = m;
                return m;
            }
            i = (i + 1) & mask;
        }
        MemorySegment m = buffer.asSlice(offset, bytes);
        if (2 * (sliceCount + 1) > slices.length) {
            growOrClearSlices();
            return remember(address, m);
        }
        sliceAddresses[i] = address;
        slices[i] = m;
        sliceCount++;
        return m;
    }

    private MemorySegment remember(long address, MemorySegment m) {
        int mask = slices.length - 1;
        int i = spread(address) & mask;
        while (slices[i] != null) {
            i = (i + 1) & mask;
        }
        sliceAddresses[i] = address;
        slices[i] = m;
        sliceCount++;
        return m;
    }

    /** Doubles the slice table up to {@link #MAX_SLICES}; past that, starts it again empty. */
    private void growOrClearSlices() {
        long[] oldAddresses = sliceAddresses;
        MemorySegment[] old = slices;
        int size = Math.min(MAX_SLICES, old.length * 2);
        sliceAddresses = new long[size];
        slices = new MemorySegment[size];
        sliceCount = 0;
        if (size == old.length) {
            return;
        }
        for (int k = 0; k < old.length; k++) {
            if (old[k] != null) {
                remember(oldAddresses[k], old[k]);
            }
        }
    }

    private static int spread(long address) {
        long h = address * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 32);
    }
}
