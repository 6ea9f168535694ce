package io.jccl.core.transport;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SpiArrays;

import java.lang.foreign.MemorySegment;

/**
 * The receiving direction. Operations announce how many steps they will receive
 * ({@link #expect}); the proxy posts irecvs ahead into free slots ({@code posted}), up to
 * {@code NCCL_STEPS} deep, and tests the oldest ({@code received}); the kernel reads completed
 * slots and {@link #consume}s them ({@code consumed}).
 *
 * <p>A message whose bytes the operation only stores in the user's host buffer can instead be
 * received straight there ({@link #receiveInto}, announced before its {@link #expect}): its irecv
 * then names the user's range (registered once, {@link #directHandle}) instead of a slot, and the
 * kernel finds it {@link #receivedDirectly() already in place}.
 */
public final class NetRecvConnection extends RecvConnection {
    private final NetPlugin net;
    private final RecvComm comm;
    private final NetRequest[] requests = new NetRequest[STEPS];
    private final int[] testSizes = new int[8];
    /** The plugin's registration of the slot buffer. */
    MemoryHandle memoryHandle;
    private final int[] sizes = new int[STEPS];
    private final MemorySegment[] irecvData = new MemorySegment[1];
    private final int[] irecvTags = new int[1];
    private final MemoryHandle[] irecvHandles = new MemoryHandle[1];
    /** Slots in GPU memory that the transport wrote (GPUDirect): each receive is flushed before the kernel reads it. */
    private final boolean flushes;
    private final NetRequest[] flushing = new NetRequest[STEPS];
    private final MemorySegment[] flushData = new MemorySegment[1];
    /** Per slot, the range last flushed: reused while receives keep their size, so flushing allocates nothing. */
    private final MemorySegment[] flushRanges = new MemorySegment[STEPS];
    /** The caller's buffers registered for direct receives, and their slices. */
    private final UserBuffers user;
    /** Messages to receive into the user's buffer, in order of their number: a ring queue. */
    private long[] targetIndex = new long[16];
    private MemorySegment[] targetSlice = new MemorySegment[16];
    private MemoryHandle[] targetHandle = new MemoryHandle[16];
    private int targetHead;
    private int targetTail;
    /** Per slot: whether its message went to the user's buffer instead. */
    private final boolean[] direct = new boolean[STEPS];
    private long directReceives;
    private long expected;
    private long posted;
    private long received;
    private long consumed;

    NetRecvConnection(NetPlugin net, RecvComm comm, int peer, String name, MemorySegment buffer, int slotBytes) {
        this(net, comm, peer, name, buffer, slotBytes, false);
    }

    NetRecvConnection(NetPlugin net, RecvComm comm, int peer, String name, MemorySegment buffer, int slotBytes,
                      boolean flushes) {
        super(peer, name, buffer, slotBytes);
        this.net = net;
        this.comm = comm;
        this.flushes = flushes;
        irecvTags[0] = peer;
        this.user = new UserBuffers(net, comm);
    }

    /** Lets {@link #directHandle} register user buffers: only for connections whose user buffers are host memory. */
    public void allowDirect() {
        if (!flushes) {
            user.allow();
        }
    }

    /** @return the registration to receive straight into {@code buffer}, or {@code null}: receive into slots */
    public MemoryHandle directHandle(MemorySegment buffer) {
        return user.handle(buffer, received);
    }

    /** @return the messages announced so far ({@link #expect}): the next announced is number {@code expected()} (from 0) */
    public long expected() {
        return expected;
    }

    /**
     * Receives message number {@code index} (from 0; not yet announced by {@link #expect}) straight into
     * {@code bytes} of {@code buffer} at {@code offset}. Messages so placed must be announced in order.
     *
     * @param handle from {@link #directHandle} for {@code buffer}
     */
    public void receiveInto(long index, MemorySegment buffer, long offset, int bytes, MemoryHandle handle) {
        if (targetTail - targetHead == targetIndex.length) {
            growTargets();
        }
        int i = targetTail & (targetIndex.length - 1);
        targetIndex[i] = index;
        SpiArrays.set(targetSlice, i, user.slice(buffer, offset, bytes));
        SpiArrays.set(targetHandle, i, handle);
        targetTail++;
        user.used(handle, index + 1);
    }

    private void growTargets() {
        int n = targetIndex.length;
        long[] index = new long[2 * n];
        MemorySegment[] slice = new MemorySegment[2 * n];
        MemoryHandle[] handle = new MemoryHandle[2 * n];
        for (int k = 0; k < n; k++) {
            int from = (targetHead + k) & (n - 1);
            index[k] = targetIndex[from];
            slice[k] = targetSlice[from];
            handle[k] = targetHandle[from];
        }
        targetIndex = index;
        targetSlice = slice;
        targetHandle = handle;
        targetTail -= targetHead;
        targetHead = 0;
    }

    /** @return whether the message of {@link #dataSlot()} went straight to the user's buffer instead */
    public boolean receivedDirectly() {
        return direct[(int) (consumed & MASK)];
    }

    /** @return messages received straight into user buffers */
    public long directReceives() {
        return directReceives;
    }

    /** Announces {@code steps} more messages that queued operations will consume. Proxy thread. */
    @Override
    public void expect(long steps) {
        expected += steps;
    }

    /** @return whether a received slot waits for the kernel */
    @Override
    public boolean hasData() {
        return received > consumed;
    }

    /** @return the oldest received slot; valid while {@link #hasData()} */
    @Override
    public MemorySegment dataSlot() {
        return slots[(int) (consumed & MASK)];
    }

    /** @return bytes received in {@link #dataSlot()} */
    @Override
    public int dataSize() {
        return sizes[(int) (consumed & MASK)];
    }

    /** The kernel is done with {@link #dataSlot()}: the proxy may receive into it again. */
    @Override
    public void consume() {
        consumed++;
    }

    @Override
    public int progress() throws NetException {
        int work = 0;
        while (posted < expected && posted - consumed < STEPS) {
            int s = (int) (posted & MASK);
            int t = targetHead & (targetIndex.length - 1);
            boolean toUser = targetHead != targetTail && targetIndex[t] == posted;
            SpiArrays.set(irecvData, 0, toUser ? targetSlice[t] : slots[s]);
            SpiArrays.set(irecvHandles, 0, toUser ? targetHandle[t] : memoryHandle);
            NetRequest r = net.irecv(comm, 1, irecvData, irecvTags, irecvHandles);
            if (r == null) {
                break;
            }
            if (toUser) {
                targetSlice[t] = null;
                targetHandle[t] = null;
                targetHead++;
                directReceives++;
            }
            direct[s] = toUser;
            SpiArrays.set(requests, s, r);
            posted++;
            work++;
        }
        // One completion a call: testing the next receive right after would, over a socket, mostly
        // be a read that finds nothing yet; the caller polls again when it wants that message.
        if (received == posted) {
            return work;
        }
        int s = (int) (received & MASK);
        if (requests[s] != null) {
            if (!net.test(requests[s], testSizes)) {
                return work;
            }
            sizes[s] = testSizes[0];
            requests[s] = null;
            if (flushes && sizes[s] > 0) {
                // NCCL's iflush: the NIC's writes into GPU memory are visible to the kernel after it.
                MemorySegment range = flushRanges[s];
                if (range == null || range.byteSize() != sizes[s]) {
                    range = slots[s].asSlice(0, sizes[s]);
                    SpiArrays.set(flushRanges, s, range);
                }
                SpiArrays.set(flushData, 0, range);
                SpiArrays.set(flushing, s, net.iflush(comm, 1, flushData, irecvHandles));
            }
        }
        if (flushing[s] != null) {
            if (!net.test(flushing[s], testSizes)) {
                return work;
            }
            flushing[s] = null;
        }
        received++;
        work++;
        return work;
    }

    /** @return the messages received so far: slots up to there hold data for the kernel */
    public long received() {
        return received;
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
        return posted == received;
    }

    @Override
    public String waitingFor() {
        if (received < posted) {
            return "data from rank " + peer + " (" + (posted - received) + " receives posted on " + name + ")";
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
            net.closeRecv(comm);
        }
    }
}
