package io.jccl.net.socket;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;

/**
 * The first bytes on every TCP connection of a JcclSocket comm (32 bytes, little-endian), so that
 * a listener can tell its own connections from strays and group the streams of one comm:
 *
 * <pre>
 *  0  u32  magic (as in the handle)
 *  4  u8   version
 *  5  u8   index of this socket: 0 = control stream, 1..n = data streams, n+1 = liveness
 *  6  u16  number of data streams of the comm
 *  8  u8[16] the listener's secret, from the handle
 * 24  u64  connection id, the same on every socket of one comm
 * </pre>
 */
final class Handshake {
    static final int BYTES = 32;

    final int socketIndex;
    final int streams;
    final long connectionId;

    private Handshake(int socketIndex, int streams, long connectionId) {
        this.socketIndex = socketIndex;
        this.streams = streams;
        this.connectionId = connectionId;
    }

    /** @return the index of the liveness socket of a comm with {@code streams} data streams: the last one */
    static int livenessIndex(int streams) {
        return streams + 1;
    }

    /** @return how many sockets a comm with {@code streams} data streams has: control, data, liveness */
    static int sockets(int streams) {
        return streams + 2;
    }

    static ByteBuffer encode(int socketIndex, int streams, byte[] secret, long connectionId) {
        ByteBuffer b = ByteBuffer.allocate(BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(SocketHandle.MAGIC).put(SocketHandle.VERSION).put((byte) socketIndex).putShort((short) streams)
                .put(secret).putLong(connectionId);
        return b.flip();
    }

    /**
     * @param b       {@link #BYTES} bytes received
     * @param secret  the listener's secret
     * @return the decoded handshake
     * @throws IllegalArgumentException saying what is wrong, for the listener's log line
     */
    static Handshake decode(ByteBuffer b, byte[] secret) {
        b.order(ByteOrder.LITTLE_ENDIAN);
        int magic = b.getInt(0);
        if (magic != SocketHandle.MAGIC) {
            throw new IllegalArgumentException("bad magic 0x" + Integer.toHexString(magic));
        }
        if (b.get(4) != SocketHandle.VERSION) {
            throw new IllegalArgumentException("unsupported version " + b.get(4));
        }
        byte[] presented = new byte[SocketHandle.SECRET_BYTES];
        b.get(8, presented);
        if (!MessageDigest.isEqual(presented, secret)) {
            throw new IllegalArgumentException("wrong secret (not a connection made from this listener's handle)");
        }
        int index = Byte.toUnsignedInt(b.get(5));
        int streams = Short.toUnsignedInt(b.getShort(6));
        if (streams > SocketConfig.MAX_STREAMS || index > livenessIndex(streams)) {
            throw new IllegalArgumentException("bad socket index " + index + " of " + streams + " streams");
        }
        return new Handshake(index, streams, b.getLong(24));
    }
}
