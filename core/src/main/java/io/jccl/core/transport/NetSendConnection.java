package io.jccl.core.transport;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.SendComm;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The sending direction. The kernel fills slot {@code filled}, then {@link #publish}es it; the
 * proxy isends published slots in order ({@code posted}) and tests the oldest until complete
 * ({@code done}), which frees the slot for the kernel again.
 *
 * <p>A step whose bytes already lie in the user's host buffer, final for the operation, can instead
 * be {@link #publishDirect published where they are}: the slot then only counts as credit, and
 * the transport sends from the user's buffer, registered once ({@link #directHandle}) and kept in
 * a small cache of registrations. That saves the copy into the slot, which through loopback TCP
 * is about a tenth of a rank's time at 1 MiB. The operation must not end before such a send
 * {@link #completed() completes}, since the user may then write the buffer.
 */
public final class NetSendConnection extends SendConnection {
    private final NetPlugin net;
    private final SendComm comm;
    private final NetRequest[] requests = new NetRequest[STEPS];
    private final int[] testSizes = new int[8];
    /** The plugin's registration of the slot buffer. */
    MemoryHandle memoryHandle;
    private final int tag;
    private final int[] sizes = new int[STEPS];
    /** The last message-sized slice of each slot, reused while the size repeats. */
    private final MemorySegment[] messages = new MemorySegment[STEPS];
    /** Per slot: the user's bytes to send instead of the slot's, or {@code null}. */
    private final MemorySegment[] directs = new MemorySegment[STEPS];
    /** Per slot: the registration {@link #directs} lie in. */
    private final MemoryHandle[] directHandles = new MemoryHandle[STEPS];
    /** Registered user buffers ({@link #directHandle}), oldest replaced first when none is free. */
    private final MemorySegment[] registered = new MemorySegment[REGISTRATIONS];
    private final MemoryHandle[] registrations = new MemoryHandle[REGISTRATIONS];
    /** Per registration: {@code filled} after the last send from it; it may be dropped once {@code done} reaches that. */
    private final long[] lastUse = new long[REGISTRATIONS];
    private int nextRegistration;
    /**
     * Slices of user buffers made for direct sends, by start address (open addressing), so that
     * operations that send the same ranges again make no new segment: the data path allocates
     * nothing per message once each range has been sent once.
     */
    private long[] sliceAddresses = new long[MIN_SLICES];
    private MemorySegment[] slices = new MemorySegment[MIN_SLICES];
    private int sliceCount;
    /** Whether {@link #directHandle} may register user buffers (host memory, and the setting allows it). */
    private boolean directAllowed;
    /** Messages sent straight from user buffers, for {@link #directSends()}. */
    private long directSends;
    private long filled;
    private long posted;
    private long done;

    /** User buffers registered at once per connection: an operation's input and output, and the last operation's. */
    static final int REGISTRATIONS = 4;
    /** The slice table's first size, and its largest: 8192 slices of 512 KiB slots cover 4 GiB of user buffers. */
    static final int MIN_SLICES = 64;
    static final int MAX_SLICES = 8192;

    NetSendConnection(NetPlugin net, SendComm comm, int myRank, int peer, String name, MemorySegment buffer, int slotBytes) {
        super(peer, name, buffer, slotBytes);
        this.net = net;
        this.comm = comm;
        this.tag = myRank;
    }

    /** @return whether a slot is free for the kernel to fill */
    @Override
    public boolean hasRoom() {
        return filled - done < STEPS;
    }

    /** @return the slot the kernel fills next; valid while {@link #hasRoom()} */
    @Override
    public MemorySegment fillSlot() {
        return slots[(int) (filled & MASK)];
    }

    /** Hands the filled slot to the proxy. @param bytes how much of it to send */
    @Override
    public void publish(int bytes) {
        int s = (int) (filled & MASK);
        sizes[s] = bytes;
        directs[s] = null;
        filled++;
    }

    /** Lets {@link #directHandle} register user buffers: only for connections whose user buffers are host memory. */
    public void allowDirect() {
        directAllowed = true;
    }

    /**
     * The registration to send straight from {@code buffer} (host memory the user owns), made on
     * first use and cached; {@code null} when this connection copies instead (not allowed, no
     * registration free, or the transport refused one: then it stops trying). Called at an
     * operation's start, by the thread that drives the proxy.
     */
    public MemoryHandle directHandle(MemorySegment buffer) {
        if (!directAllowed || buffer.byteSize() == 0) {
            return null;
        }
        long start = buffer.address();
        long end = start + buffer.byteSize();
        int free = -1;
        for (int i = 0; i < REGISTRATIONS; i++) {
            MemorySegment r = registered[i];
            if (r != null && !r.scope().isAlive() && done >= lastUse[i]) {
                drop(i);
                r = null;
            }
            if (r == null) {
                free = free < 0 ? i : free;
            } else if (r.scope().equals(buffer.scope()) && r.address() <= start && end <= r.address() + r.byteSize()) {
                return registrations[i];
            }
        }
        if (free < 0) {
            for (int k = 0; k < REGISTRATIONS && free < 0; k++) {
                int i = (nextRegistration + k) % REGISTRATIONS;
                if (done >= lastUse[i]) {
                    drop(i);
                    free = i;
                }
            }
            if (free < 0) {
                return null;
            }
        }
        try {
            registrations[free] = net.regMr(comm, buffer, PointerType.HOST);
        } catch (NetException | RuntimeException e) {
            directAllowed = false;
            return null;
        }
        registered[free] = buffer;
        lastUse[free] = 0;
        nextRegistration = (free + 1) % REGISTRATIONS;
        return registrations[free];
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
                directAllowed = false;
            }
        }
    }

    /**
     * Hands the transport {@code bytes} of {@code buffer} from {@code offset} to send as the next
     * message, without a copy; takes a slot's credit like {@link #publish}. The bytes must stay as
     * they are until {@link #completed()} reaches the returned count.
     *
     * @param handle from {@link #directHandle} for {@code buffer}
     * @return the count of published messages up to and including this one
     */
    public long publishDirect(MemorySegment buffer, long offset, int bytes, MemoryHandle handle) {
        int s = (int) (filled & MASK);
        sizes[s] = bytes;
        directs[s] = slice(buffer, offset, bytes);
        directHandles[s] = handle;
        filled++;
        directSends++;
        for (int i = 0; i < REGISTRATIONS; i++) {
            if (registrations[i] == handle) {
                lastUse[i] = filled;
            }
        }
        return filled;
    }

    /** A slice of {@code buffer}, reused when an earlier direct send had the same range of the same memory. */
    private MemorySegment slice(MemorySegment buffer, long offset, int bytes) {
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

    @Override
    public int progress() throws NetException {
        int work = 0;
        while (posted < filled) {
            int s = (int) (posted & MASK);
            MemorySegment direct = directs[s];
            NetRequest r = direct != null ? net.isend(comm, direct, tag, directHandles[s])
                    : net.isend(comm, message(s), tag, memoryHandle);
            if (r == null) {
                break;
            }
            requests[s] = r;
            posted++;
            work++;
        }
        while (done < posted) {
            int s = (int) (done & MASK);
            if (!net.test(requests[s], testSizes)) {
                break;
            }
            requests[s] = null;
            directs[s] = null;
            done++;
            work++;
        }
        return work;
    }

    private MemorySegment message(int s) {
        MemorySegment m = messages[s];
        if (m == null || m.byteSize() != sizes[s]) {
            m = slots[s].asSlice(0, sizes[s]);
            messages[s] = m;
        }
        return m;
    }

    /** @return messages published with {@link #publishDirect}: sent from user buffers without a copy */
    public long directSends() {
        return directSends;
    }

    /** @return the sends the transport completed: slots up to there are free again */
    public long completed() {
        return done;
    }

    /** @return the plugin's comm */
    io.jccl.spi.NetComm comm() {
        return comm;
    }

    @Override
    public String transport() {
        return "net";
    }

    @Override
    public boolean drained() {
        return done == filled;
    }

    @Override
    public String waitingFor() {
        if (posted < filled) {
            return "rank " + peer + " to post a receive (" + (filled - posted) + " messages ready on " + name + ")";
        }
        if (done < posted) {
            return "rank " + peer + " to take " + (posted - done) + " messages in flight on " + name;
        }
        return "nothing on " + name;
    }

    @Override
    void closeComm() throws NetException {
        try {
            for (int i = 0; i < REGISTRATIONS; i++) {
                if (registrations[i] != null) {
                    drop(i);
                }
            }
            if (memoryHandle != null) {
                net.deregMr(comm, memoryHandle);
            }
        } finally {
            net.closeSend(comm);
        }
    }
}
