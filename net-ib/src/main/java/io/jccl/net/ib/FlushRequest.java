package io.jccl.net.ib;

/** An {@code iflush}: one RDMA read on the loopback queue pair. */
final class FlushRequest extends IbRequest {
    final IbRecvComm comm;
    final int index;

    FlushRequest(IbRecvComm comm, int index) {
        this.comm = comm;
        this.index = index;
    }

    @Override
    IbComm comm() {
        return comm;
    }
}
