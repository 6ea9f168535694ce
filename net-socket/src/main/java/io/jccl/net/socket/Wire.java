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
 * round-robin over the streams, the same way on both sides ({@link SocketComm#stripe}).
 *
 * <p>A small send need not wait for its CTS (which would put a round trip in front of every
 * message whose receive was posted late, as NCCL's latency-bound steps are):
 * <pre>
 * EAGER u8 type=3, u8 0, u8 0, u8 0, i32 tag, i64 size, then size bytes of payload
 * </pre>
 * Both ends place it by the rule every send follows, so they agree without naming the receive:
 * a send goes to the oldest receive that is not yet full, into its first unfilled buffer of the
 * send's tag. The receiver keeps an EAGER that arrives before its receive is posted in one of
 * {@link #EAGER_SLOTS} slots; the sender keeps at most that many EAGERs unplaced, and learns where
 * each went (and whether it fitted) from the CTS of its receive. An EAGER send completes once
 * written to the socket (as NCCL's Socket's sends do); one too large for its receive fails
 * that receive, and the sending comm when the CTS tells it.
 *
 * <p>A larger send may go ahead of its CTS too when the receiver's latest receive had one buffer of
 * the send's tag and at least its size (NCCL posts one buffer size per connection):
 * <pre>
 * EAGER u8 type=3, u8 0, u8 flags=AHEAD[|INLINE], u8 0, i32 tag, i64 size
 *       [payload as for DATA: inline, after the frame, or over the data streams]
 * </pre>
 * It takes no slot: the receiver parses nothing after it until a receive is posted for it, so its
 * payload waits in the sockets (as every message does with NCCL's Socket). It counts against the
 * same {@link #EAGER_SLOTS} credit, and is placed by the same rule. If its receive is smaller after
 * all, both comms fail (the receiver cannot take the bytes and must not lose its place).
 *
 * <p>So small messages need no CTS each, only the credit a CTS returns: while messages are small
 * the receiver holds its CTS frames back and writes them {@code SocketRecvComm.CTS_BATCH} at a time
 * (one write per message instead of two). Large messages that could go ahead need none either: a
 * DATA frame with flag AHEAD_OK says that its send would have gone ahead had its CTS not been in
 * hand, and the receiver then holds back the CTS frames of later receives like the last one (one
 * buffer, same tag and capacity) as for small messages; a receive unlike the last is announced at
 * once. A sender that waits for a CTS (a large send, or EAGER
 * credit spent) says so, once until a CTS comes:
 * <pre>
 * WANT  u8 type=4, 15 bytes 0
 * </pre>
 * and the receiver then writes what it holds, or the next CTS at once. The sender also writes one
 * byte 0xC7 on the liveness socket, whose reader on the receiving side (the liveness thread) writes
 * the held-back frames itself: a caller that posts a receive and then only retries its send, never
 * calling the receiving comm again, is not left waiting.
 */
final class Wire {
    static final byte CTS = 1;
    static final byte DATA = 2;
    static final byte EAGER = 3;
    static final byte WANT = 4;

    /**
     * EAGERs a sender may have in flight before their receives are known, and the size of each.
     * Twice the receiver's CTS batch, which is as large as its request slots allow: a batch of 8
     * (16 slots) cost a small message an eighth of a write and a read more than a raw socket pair,
     * about 0.5 us of 7 on the build machine's one-thread measure (net-socket/README.md).
     */
    static final int EAGER_SLOTS = 64;
    static final int EAGER_SLOT_BYTES = 1024;

    static final int CTS_HEADER = 8;
    static final int CTS_ENTRY = 12;
    static final int DATA_HEADER = 16;

    /**
     * The largest inline payload any peer may send (the top of NCCL_SOCKET_INLINE's range): 64 KiB
     * and room for a small header of the sender's own, so that a 64 KiB message the engine frames
     * (its LL path puts 16 bytes in front) still goes as one write and one read.
     */
    static final int MAX_INLINE = (64 << 10) + 64;

    static final int FLAG_INLINE = 1;
    static final int FLAG_OVERSIZE = 2;
    /** On an EAGER: a message of any size, not for a slot; the receiver reads it once its receive is posted. */
    static final int FLAG_AHEAD = 4;
    /** On a DATA frame: the send could have gone ahead of its CTS (the receiver's latest receive fitted it). */
    static final int FLAG_AHEAD_OK = 8;

    private Wire() {
    }

    static int ctsBytes(int n) {
        return CTS_HEADER + n * CTS_ENTRY;
    }
}
