package io.jccl.core.transport;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.SendComm;

import java.lang.foreign.MemorySegment;

/**
 * The sending direction. The kernel fills slot {@code filled}, then {@link #publish}es it; the
 * proxy isends published slots in order ({@code posted}) and tests the oldest until complete
 * ({@code done}), which frees the slot for the kernel again.
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
    private long filled;
    private long posted;
    private long done;

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
        sizes[(int) (filled & MASK)] = bytes;
        filled++;
    }

    @Override
    public int progress() throws NetException {
        int work = 0;
        while (posted < filled) {
            int s = (int) (posted & MASK);
            NetRequest r = net.isend(comm, message(s), tag, memoryHandle);
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
            if (memoryHandle != null) {
                net.deregMr(comm, memoryHandle);
            }
        } finally {
            net.closeSend(comm);
        }
    }
}
