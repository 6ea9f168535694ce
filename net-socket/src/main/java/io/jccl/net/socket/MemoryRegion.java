package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/**
 * A registration: host memory that sends and receives of one comm may use, with ByteBuffer views
 * over it made once here so that socket I/O on any sub-range needs no allocation and no copy.
 *
 * <p>A ByteBuffer holds at most 2 GiB, so a region is covered by overlapping windows of up to
 * 2 GiB - 1 bytes that start every {@link #WINDOW_STEP} bytes: any range of at most
 * {@link #WINDOW_STEP} bytes lies inside the window where it starts. Each stream (control and data)
 * gets its own views, because a view's position and limit are per I/O call.
 */
final class MemoryRegion implements MemoryHandle {
    /** Distance between window starts; also the largest range a single I/O may cover. */
    static final long WINDOW_STEP = 1L << 30;
    private static final long WINDOW_SIZE = Integer.MAX_VALUE;

    final SocketComm owner;
    final MemorySegment memory;
    final long base;
    /** views[stream][window]. */
    private final ByteBuffer[][] views;
    private volatile boolean released;

    MemoryRegion(SocketComm owner, MemorySegment memory, int streamCount) {
        this.owner = owner;
        this.memory = memory;
        this.base = memory.address();
        int windows = (int) Math.max(1, (memory.byteSize() + WINDOW_STEP - 1) / WINDOW_STEP);
        this.views = new ByteBuffer[streamCount][windows];
        for (int w = 0; w < windows; w++) {
            long start = w * WINDOW_STEP;
            ByteBuffer window = memory.asSlice(start, Math.min(WINDOW_SIZE, memory.byteSize() - start)).asByteBuffer();
            for (int s = 0; s < streamCount; s++) {
                views[s][w] = s == 0 ? window : window.duplicate();
            }
        }
    }

    /**
     * Positions a view of {@code stream} on {@code [offset, offset + length)} of this region.
     *
     * @param length at most {@link #WINDOW_STEP}
     * @return the view, ready for one channel read or write
     */
    ByteBuffer view(int stream, long offset, int length) {
        int w = (int) (offset / WINDOW_STEP);
        int start = (int) (offset - w * WINDOW_STEP);
        ByteBuffer b = views[stream][w];
        b.limit(start + length).position(start);
        return b;
    }

    /**
     * @return the offset of {@code data} inside this region
     * @throws NetException {@code ncclInvalidArgument} if {@code data} is not inside it
     */
    long offsetOf(MemorySegment data) throws NetException {
        long off = data.address() - base;
        if (!data.isNative() || off < 0 || off + data.byteSize() > memory.byteSize()) {
            throw NetException.invalidArgument("buffer [0x" + Long.toHexString(data.address()) + ", +"
                    + data.byteSize() + ") is not inside the registered region [0x" + Long.toHexString(base) + ", +"
                    + memory.byteSize() + ")");
        }
        return off;
    }

    boolean isReleased() {
        return released;
    }

    void release() {
        released = true;
    }
}
