package io.jccl.net.socket;

import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A pooled send or receive. The comm that owns it hands it out again once {@code test} has reported
 * it complete. Payload bytes still to move are counted in {@link #pendingBytes}, which I/O threads
 * decrement as they move chunks.
 */
abstract sealed class SocketRequest implements NetRequest permits SendRequest, RecvRequest {
    private static final VarHandle PENDING;

    static {
        try {
            PENDING = MethodHandles.lookup().findVarHandle(SocketRequest.class, "pendingBytes", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final SocketComm comm;
    /** Position in the comm's request ring. */
    final int slot;
    /** True from the call that handed it out until test reported it complete. */
    boolean active;
    /** A failure of this request only (an oversized message); the comm stays usable. */
    NetException error;
    @SuppressWarnings("unused") // accessed through PENDING
    private volatile long pendingBytes;
    /** When test() first found it pending (0: not yet), for the report of a long wait. */
    long firstPendingNanos;

    SocketRequest(SocketComm comm, int slot) {
        this.comm = comm;
        this.slot = slot;
    }

    final void addPending(long bytes) {
        PENDING.getAndAdd(this, bytes);
    }

    /** Called by whichever thread moved the bytes. */
    final void moved(long bytes) {
        PENDING.getAndAdd(this, -bytes);
    }

    final long pending() {
        return (long) PENDING.getAcquire(this);
    }

    void reset() {
        error = null;
        firstPendingNanos = 0;
        PENDING.setRelease(this, 0L);
    }
}
