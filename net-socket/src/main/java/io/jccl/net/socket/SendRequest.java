package io.jccl.net.socket;

/**
 * One {@code isend}: complete once all its bytes are in the kernel (or were copied inline) and, for
 * an EAGER send, once the receiver's CTS says which receive it went to.
 */
final class SendRequest extends SocketRequest {
    int size;
    /** False while an EAGER send's receive is not yet known. */
    boolean placed = true;

    SendRequest(SocketComm comm, int slot) {
        super(comm, slot);
    }

    @Override
    void reset() {
        super.reset();
        placed = true;
    }
}
