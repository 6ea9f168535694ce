package io.jccl.net.ib;

import io.jccl.spi.NetRequest;

/**
 * A pooled request of one comm. {@code test} reads its state; the comm's completion handling
 * writes it, on the same (progress) thread.
 */
abstract sealed class IbRequest implements NetRequest permits SendRequest, RecvRequest, FlushRequest {
    static final int FREE = 0;
    static final int PENDING = 1;
    static final int DONE = 2;

    int state = FREE;
    /** Set when the request completed with an error that is its own (a message too large). */
    String error;

    abstract IbComm comm();
}
