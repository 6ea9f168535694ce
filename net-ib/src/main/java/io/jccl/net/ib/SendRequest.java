package io.jccl.net.ib;

/** An {@code isend}: one message into one entry of a FIFO slot. */
final class SendRequest extends IbRequest {
    final IbSendComm comm;
    long seq;
    int entry;
    long address;
    long size;
    int lkey;
    /** The message is larger than the receiver's buffer: nothing is written, both sides fail. */
    boolean oversize;

    SendRequest(IbSendComm comm) {
        this.comm = comm;
    }

    @Override
    IbComm comm() {
        return comm;
    }
}
