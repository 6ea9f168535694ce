package io.jccl.net.socket;

/** One {@code isend}: complete once all its bytes are in the kernel or were copied inline. */
final class SendRequest extends SocketRequest {
    int size;

    SendRequest(SocketComm comm, int slot) {
        super(comm, slot);
    }
}
