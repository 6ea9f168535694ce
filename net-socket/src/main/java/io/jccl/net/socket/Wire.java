package io.jccl.net.socket;

/**
 * Frames on the control stream of a connection (little-endian).
 *
 * <p>Receiver to sender, one per posted receive, in posting order:
 * <pre>
 * CTS   u8 type=1, u8 n, u16 0, u32 seq, then n x { i64 capacity, i32 tag }
 * </pre>
 * Sender to receiver, one per send, in sending order:
 * <pre>
 * DATA  u8 type=2, u8 buffer index, u8 flags, u8 0, u32 seq, i64 size
 *       [size bytes of payload if INLINE, or if the comm has no data streams]
 * </pre>
 * {@code seq} names the receive (the n-th CTS) and the buffer index the buffer inside it. Flag
 * OVERSIZE says the send was larger than the buffer: nothing follows, and both sides fail their
 * request. Payload of a non-inline message on a comm with data streams is cut into chunks dealt
 * round-robin over the streams, the same way on both sides ({@link Striping}).
 */
final class Wire {
    static final byte CTS = 1;
    static final byte DATA = 2;

    static final int CTS_HEADER = 8;
    static final int CTS_ENTRY = 12;
    static final int DATA_HEADER = 16;

    /** The largest inline payload any peer may send (the top of NCCL_SOCKET_INLINE's range). */
    static final int MAX_INLINE = 64 << 10;

    static final int FLAG_INLINE = 1;
    static final int FLAG_OVERSIZE = 2;

    private Wire() {
    }

    static int ctsBytes(int n) {
        return CTS_HEADER + n * CTS_ENTRY;
    }
}
