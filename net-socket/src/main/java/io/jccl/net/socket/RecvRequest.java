package io.jccl.net.socket;

import java.lang.foreign.MemorySegment;

/**
 * One grouped {@code irecv} of up to {@link SocketDevices#MAX_RECVS} buffers: complete once every
 * buffer's DATA frame has arrived and all payload is in memory.
 */
final class RecvRequest extends SocketRequest {
    /** The CTS sequence number this receive was announced with. */
    long seq;
    int n;
    /** DATA frames received so far, one per buffer. */
    int announced;
    final MemorySegment[] buffers = new MemorySegment[SocketDevices.MAX_RECVS];
    final MemoryRegion[] regions = new MemoryRegion[SocketDevices.MAX_RECVS];
    final long[] offsets = new long[SocketDevices.MAX_RECVS];
    final int[] tags = new int[SocketDevices.MAX_RECVS];
    final int[] sizes = new int[SocketDevices.MAX_RECVS];
    final boolean[] arrived = new boolean[SocketDevices.MAX_RECVS];
    /** A buffer is device memory: the request completes once its copies to the GPU are done. */
    boolean onDevice;
    /** Those copies are queued, under the marker of its slot. */
    boolean copying;

    RecvRequest(SocketComm comm, int slot) {
        super(comm, slot);
    }

    @Override
    void reset() {
        super.reset();
        announced = 0;
        onDevice = false;
        copying = false;
        for (int i = 0; i < n; i++) {
            buffers[i] = null;
            regions[i] = null;
            arrived[i] = false;
            sizes[i] = 0;
        }
        n = 0;
    }
}
