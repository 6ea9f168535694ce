package io.jccl.net.socket;

import io.jccl.cuda.DeviceBuffer;
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
 *
 * <p>A registration of CUDA device memory has a pinned host mirror of the same size: {@link #memory}
 * is the mirror, where the sockets read and write, and {@link #base} the device address that
 * requests name; {@link DeviceStaging} copies between the two.
 */
final class MemoryRegion implements MemoryHandle {
    /** Distance between window starts; also the largest range a single I/O may cover. */
    static final long WINDOW_STEP = 1L << 30;
    private static final long WINDOW_SIZE = Integer.MAX_VALUE;

    final SocketComm owner;
    /** Host memory the sockets use: the registered memory, or a device registration's mirror. */
    final MemorySegment memory;
    /** The address requests are relative to: the registered memory's, host or device. */
    final long base;
    /** The registered size. */
    final long size;
    /** A device registration's pinned host mirror; null for host memory. */
    final DeviceBuffer mirror;
    /** views[stream][window]. */
    private final ByteBuffer[][] views;
    private volatile boolean released;

    MemoryRegion(SocketComm owner, MemorySegment memory, int streamCount) {
        this(owner, memory, streamCount, memory.address(), null);
    }

    /** A device registration at {@code deviceBase}, staged through {@code mirror}. */
    MemoryRegion(SocketComm owner, DeviceBuffer mirror, long deviceBase, int streamCount) {
        this(owner, mirror.segment(), streamCount, deviceBase, mirror);
    }

    private MemoryRegion(SocketComm owner, MemorySegment memory, int streamCount, long base, DeviceBuffer mirror) {
        this.owner = owner;
        this.memory = memory;
        this.base = base;
        this.size = memory.byteSize();
        this.mirror = mirror;
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
        if (!data.isNative() || off < 0 || off + data.byteSize() > size) {
            throw NetException.invalidArgument("buffer [0x" + Long.toHexString(data.address()) + ", +"
                    + data.byteSize() + ") is not inside the registered region [0x" + Long.toHexString(base) + ", +"
                    + size + ")");
        }
        return off;
    }

    /** @return whether this is device memory, staged through a host mirror */
    boolean onDevice() {
        return mirror != null;
    }

    boolean isReleased() {
        return released;
    }

    /** Deregistration: no request uses it any more (the API's rule), so a mirror is freed now. */
    void release() {
        released = true;
        if (mirror != null) {
            mirror.close();
        }
    }
}
