package io.jccl.nativenet;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A comm of a native plugin: its {@code void*}, and the native memory its data calls reuse (the
 * request and done out-parameters, the sizes of {@code test}, the arrays of a grouped receive), so
 * that {@code isend}, {@code irecv} and {@code test} allocate nothing. Also the pool of
 * {@link NativeRequest}s that stand for the plugin's request pointers.
 *
 * <p>Used by one thread at a time, as every comm is (SPI); nothing here is synchronized.
 */
abstract class NativeComm {
    /** Buffers of a grouped receive, at most (NCCL posts at most 8). */
    static final int MAX_BUFFERS = 64;

    static final long REQUEST = 0;
    static final long DONE = 8;
    static final long SIZES = 16;
    static final long RECV_DATA = SIZES + 4L * MAX_BUFFERS;
    static final long RECV_SIZES = RECV_DATA + 8L * MAX_BUFFERS;
    static final long RECV_TAGS = RECV_SIZES + 8L * MAX_BUFFERS;
    static final long RECV_HANDLES = RECV_TAGS + 4L * MAX_BUFFERS;
    /** NULL profiler handles for v10+ irecv: never written. */
    static final long PROFILER_HANDLES = RECV_HANDLES + 8L * MAX_BUFFERS;
    private static final long SCRATCH = PROFILER_HANDLES + 8L * MAX_BUFFERS;

    final Object plugin;
    final long pointer;
    /** The device the comm was opened on (listen, connect), -1 for a CollNet comm. */
    final int dev;
    final MemorySegment scratch;
    final long scratchAddress;
    private NativeRequest[] pool = new NativeRequest[0];
    private int[] free = new int[0];
    private int freeCount;

    NativeComm(Object plugin, long pointer, int dev, boolean dataPath) {
        this.plugin = plugin;
        this.pointer = pointer;
        this.dev = dev;
        this.scratch = dataPath ? Arena.ofAuto().allocate(SCRATCH, 8) : MemorySegment.NULL;
        this.scratchAddress = scratch.address();
    }

    /** @return a request object standing for the plugin's request {@code pointer} */
    NativeRequest request(long requestPointer, int buffers) {
        if (freeCount == 0) {
            int n = pool.length;
            int grown = Math.max(8, n * 2);
            pool = Arrays.copyOf(pool, grown);
            free = Arrays.copyOf(free, grown);
            for (int i = grown - 1; i >= n; i--) {
                pool[i] = new NativeRequest(this, i);
                free[freeCount++] = i;
            }
        }
        NativeRequest r = pool[free[--freeCount]];
        r.pointer = requestPointer;
        r.buffers = buffers;
        r.inFlight = true;
        return r;
    }

    void release(NativeRequest r) {
        if (r.inFlight) {
            r.inFlight = false;
            r.pointer = 0;
            free[freeCount++] = r.index;
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[0x" + Long.toHexString(pointer) + "]";
    }
}
