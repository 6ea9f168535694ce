package io.jccl.net.ib;

/** An {@code irecv} of up to {@link IbDevice#MAX_RECVS} buffers: one FIFO slot. */
final class RecvRequest extends IbRequest {
    final IbRecvComm comm;
    final int slot;
    long seq;
    int n;
    /** Completions still expected: one WRITE_WITH_IMM per queue pair the message uses. */
    int events;
    final long[] capacity = new long[IbDevice.MAX_RECVS];
    final int[] sizes = new int[IbDevice.MAX_RECVS];

    RecvRequest(IbRecvComm comm, int slot) {
        this.comm = comm;
        this.slot = slot;
    }

    @Override
    IbComm comm() {
        return comm;
    }
}
