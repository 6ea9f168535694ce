package io.jccl.net.socket;

/** One {@code isend}: complete once all its bytes are in the kernel or were copied inline. */
final class SendRequest extends SocketRequest {
    int size;
    // A send waiting to be striped (device memory on its way to the host mirror, or behind one that is).
    MemoryRegion stageRegion;
    long stageOffset;
    /** Its copy from the GPU is queued, under the marker of its slot. */
    boolean copying;

    SendRequest(SocketComm comm, int slot) {
        super(comm, slot);
    }

    @Override
    void reset() {
        super.reset();
        stageRegion = null;
        copying = false;
    }
}
