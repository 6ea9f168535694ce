package io.jccl.core.transport;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.SendComm;
import io.jccl.spi.SpiArrays;

import java.lang.foreign.MemorySegment;

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
    /** The caller's buffers registered for direct sends, and their slices. */
    private final UserBuffers user;
    /** Messages sent straight from user buffers, for {@link #directSends()}. */
    private long directSends;
    private long filled;
    private long posted;
    private long done;

    /** User buffers registered at once per connection. */
    static final int REGISTRATIONS = UserBuffers.REGISTRATIONS;

    NetSendConnection(NetPlugin net, SendComm comm, int myRank, int peer, String name, MemorySegment buffer, int slotBytes) {
        super(peer, name, buffer, slotBytes);
        this.net = net;
        this.comm = comm;
        this.tag = myRank;
        this.user = new UserBuffers(net, comm);
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
        user.allow();
    }

    /**
     * The registration to send straight from {@code buffer} (host memory the user owns), made on
     * first use and cached; {@code null} when this connection copies instead (not allowed, no
     * registration free, or the transport refused one: then it stops trying). Called at an
     * operation's start, by the thread that drives the proxy.
     */
    public MemoryHandle directHandle(MemorySegment buffer) {
        return user.handle(buffer, done);
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
        SpiArrays.set(directs, s, user.slice(buffer, offset, bytes));
        SpiArrays.set(directHandles, s, handle);
        filled++;
        directSends++;
        user.used(handle, filled);
        return filled;
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
            SpiArrays.set(requests, s, r);
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
            SpiArrays.set(messages, s, m);
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
            user.close();
            if (memoryHandle != null) {
                net.deregMr(comm, memoryHandle);
            }
        } finally {
            net.closeSend(comm);
        }
    }
}
