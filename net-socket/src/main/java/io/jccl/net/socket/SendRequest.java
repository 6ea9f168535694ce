package io.jccl.net.socket;

/** One {@code isend}: complete once all its bytes, frame included, are in the kernel. */
final class SendRequest extends SocketRequest {
    int size;
    /**
     * The control stream's {@link ControlOut#queuedMark} once this send's frame (and payload, if it
     * goes on the control stream) is queued: the send is done only once those bytes are written.
     */
    long controlMark;
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
