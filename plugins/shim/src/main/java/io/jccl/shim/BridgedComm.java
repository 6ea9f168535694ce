package io.jccl.shim;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetRequest;
import io.jccl.spi.SpiArrays;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One comm NCCL holds a handle to, with what its data calls reuse: the slots of its requests in
 * flight (a request's handle names its comm and slot, so {@code test} finds it by index), and the
 * arrays a grouped {@code irecv} fills. NCCL uses a comm from one thread at a time, so none of this
 * is synchronized.
 */
final class BridgedComm {
    /** Slots of requests in flight, at most (a request handle has 12 bits for the slot). */
    static final int MAX_REQUESTS = 4096;
    /** Comm table indexes a request handle can name (the other 20 of its 32 index bits). */
    static final int MAX_COMM_INDEX = 1 << 20;
    /** Entries NCCL's {@code sizes} arrays of {@code test} have. */
    static final int MAX_SIZES = 64;

    final Object comm;
    final HandleTable.Kind kind;
    final long handle;
    /** Registrations made on this comm, released with it if NCCL did not. */
    final List<Registration> registrations = new ArrayList<>();
    /** Receives sizes from {@code test}. */
    final int[] sizes = new int[MAX_SIZES];

    private NetRequest[] requests = new NetRequest[64];
    private int[] requestBuffers = new int[64];
    private int[] free = new int[64];
    private int freeCount;
    private int used;

    private MemorySegment[][] recvData = new MemorySegment[0][];
    private int[][] recvTags = new int[0][];
    private MemoryHandle[][] recvHandles = new MemoryHandle[0][];

    /**
     * Grouped receives of up to this many buffers (NCCL groups at most a transport's maxRecvs, 8 for
     * JcclSocket) find their arrays made with the comm: made at a comm's first receive instead, the
     * store of a new array ran once per comm, which C2 compiled as a trap that NCCL's first receive
     * on each new comm then took (seen after the shim's warm-up, {@link ShimWarmup}).
     */
    static final int EAGER_RECV_ARRAYS = 8;

    BridgedComm(Object comm, HandleTable.Kind kind, long handle) {
        this.comm = comm;
        this.kind = kind;
        this.handle = handle;
        if (kind == HandleTable.Kind.RECV) {
            makeRecvArrays();
        }
    }

    /** Set-up path only: its stores into arrays of arrays would trap if C2 compiled them (see SpiArrays). */
    private void makeRecvArrays() {
        recvData = new MemorySegment[EAGER_RECV_ARRAYS + 1][];
        recvTags = new int[EAGER_RECV_ARRAYS + 1][];
        recvHandles = new MemoryHandle[EAGER_RECV_ARRAYS + 1][];
        for (int n = 1; n <= EAGER_RECV_ARRAYS; n++) {
            recvData[n] = new MemorySegment[n];
            recvTags[n] = new int[n];
            recvHandles[n] = new MemoryHandle[n];
        }
    }

    /**
     * @param request a request the transport returned
     * @param buffers how many sizes {@code test} reports for it (1, or n of a grouped receive)
     * @return its handle for NCCL, or 0 if {@link #MAX_REQUESTS} are already in flight (or the comm's
     *         index is beyond what a request handle can name)
     */
    long track(NetRequest request, int buffers) {
        if (HandleTable.index(handle) >= MAX_COMM_INDEX) {
            return 0;
        }
        int slot;
        if (freeCount > 0) {
            slot = free[--freeCount];
        } else {
            if (used == requests.length) {
                if (used == MAX_REQUESTS) {
                    return 0;
                }
                int grown = Math.min(MAX_REQUESTS, used * 2);
                requests = Arrays.copyOf(requests, grown);
                requestBuffers = Arrays.copyOf(requestBuffers, grown);
                free = Arrays.copyOf(free, grown);
            }
            slot = used++;
        }
        SpiArrays.set(requests, slot, request);
        requestBuffers[slot] = buffers;
        return requestHandle(slot);
    }

    private long requestHandle(int slot) {
        int index = HandleTable.index(handle);
        return HandleTable.handle(HandleTable.Kind.REQUEST, HandleTable.generation(handle), index << 12 | slot);
    }

    /** @return the comm's table index encoded in a request handle */
    static int commIndexOf(long requestHandle) {
        return HandleTable.index(requestHandle) >>> 12;
    }

    /** @return the comm a request handle belongs to, or {@code null} if it is not a live request's */
    static BridgedComm ofRequest(HandleTable<BridgedComm> comms, long requestHandle) {
        if (!HandleTable.tagged(requestHandle, HandleTable.Kind.REQUEST)) {
            return null;
        }
        return comms.get(commIndexOf(requestHandle), HandleTable.generation(requestHandle));
    }

    /** @return the request in flight behind {@code requestHandle}, or {@code null} */
    NetRequest request(long requestHandle) {
        int slot = HandleTable.index(requestHandle) & 0xFFF;
        return slot < used ? requests[slot] : null;
    }

    /** @return how many sizes {@code test} reports for the request */
    int buffers(long requestHandle) {
        return requestBuffers[HandleTable.index(requestHandle) & 0xFFF];
    }

    /** Frees a request's slot once it completed or failed. */
    void release(long requestHandle) {
        int slot = HandleTable.index(requestHandle) & 0xFFF;
        if (slot < used && requests[slot] != null) {
            requests[slot] = null;
            free[freeCount++] = slot;
        }
    }

    /** @return how many requests are in flight */
    int inFlight() {
        return used - freeCount;
    }

    /** Reusable arrays for a grouped receive of {@code n} buffers (exactly {@code n} long). */
    MemorySegment[] recvData(int n) {
        ensureRecvArrays(n);
        return recvData[n];
    }

    int[] recvTags(int n) {
        ensureRecvArrays(n);
        return recvTags[n];
    }

    MemoryHandle[] recvHandles(int n) {
        ensureRecvArrays(n);
        return recvHandles[n];
    }

    private void ensureRecvArrays(int n) {
        if (n >= recvData.length) {
            int size = n + 1;
            recvData = Arrays.copyOf(recvData, size);
            recvTags = Arrays.copyOf(recvTags, size);
            recvHandles = Arrays.copyOf(recvHandles, size);
        }
        if (recvData[n] == null) {
            recvData[n] = new MemorySegment[n];
            recvTags[n] = new int[n];
            recvHandles[n] = new MemoryHandle[n];
        }
    }
}
