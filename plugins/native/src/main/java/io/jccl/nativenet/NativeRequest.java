package io.jccl.nativenet;

import io.jccl.spi.NetRequest;

/** A native plugin's request pointer while it is in flight; pooled by its {@link NativeComm}. */
final class NativeRequest implements NetRequest {
    final NativeComm comm;
    final int index;
    long pointer;
    int buffers;
    boolean inFlight;

    NativeRequest(NativeComm comm, int index) {
        this.comm = comm;
        this.index = index;
    }

    @Override
    public String toString() {
        return "NativeRequest[0x" + Long.toHexString(pointer) + (inFlight ? "" : ", done") + "]";
    }
}
