package io.jccl.net.ib;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.Arrays;

/**
 * What each side of a connection tells the other over the side channel (NCCL's
 * {@code ncclIbConnectionMetadata}): its queue-pair numbers, where its port is, and one remote-
 * writable buffer. The sender sends a HELLO (its FIFO's address and rkey, which the receiver writes
 * clear-to-send entries into); the receiver answers with a REPLY (its completion records, which the
 * sender writes the sizes of grouped receives into). Both carry the handle's secret, so a stray or
 * forged connection is dropped.
 *
 * <pre>
 * 0  magic u32 'JCIB'   4 version u16   6 type u8   7 flags u8 (bit 0: split data on QPs)
 * 8  secret[16]
 * 24 nqps u16   26 link layer u8   27 mtu u8   28 lid u16   30 reserved u16
 * 32 gid[16]
 * 48 buffer address u64   56 buffer rkey u32   60 reserved u32
 * 64 qpn u32 * nqps
 * </pre>
 *
 * After the REPLY the sender confirms with READY (the first 8 bytes, type 3) once its queue pairs
 * are ready to receive; then the channel stays open and carries only {@link Control} frames.
 *
 * @param type           {@link #HELLO} or {@link #REPLY}
 * @param secret         the handle's secret
 * @param splitData      {@code NCCL_IB_SPLIT_DATA_ON_QPS} of the sender
 * @param peer           the port's link layer, MTU, LID and GID
 * @param bufferAddress  the remote-writable buffer (sender: FIFO; receiver: completion records)
 * @param bufferRkey     its rkey
 * @param qpns           the queue-pair numbers, in connection order
 */
record ConnectionInfo(int type, byte[] secret, boolean splitData, PeerAddress peer, long bufferAddress,
        int bufferRkey, int[] qpns) {

    static final int MAGIC = 0x4a434942; // "JCIB"
    static final int VERSION = 1;
    static final int HELLO = 1;
    static final int REPLY = 2;
    static final int READY = 3;
    static final int HEADER = 64;
    static final int READY_SIZE = 8;
    static final int MAX_QPS = 128;

    /** @return the encoded message, ready to write */
    ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(HEADER + 4 * qpns.length).order(ByteOrder.BIG_ENDIAN);
        b.putInt(MAGIC).putShort((short) VERSION).put((byte) type).put((byte) (splitData ? 1 : 0));
        b.put(secret);
        b.putShort((short) qpns.length).put((byte) peer.linkLayer()).put((byte) peer.mtu())
                .putShort((short) peer.lid()).putShort((short) 0);
        b.put(peer.gid());
        b.putLong(bufferAddress).putInt(bufferRkey).putInt(0);
        for (int q : qpns) {
            b.putInt(q);
        }
        return b.flip();
    }

    /** @return the READY message */
    static ByteBuffer ready() {
        return ByteBuffer.allocate(READY_SIZE).putInt(MAGIC).putShort((short) VERSION).put((byte) READY)
                .put((byte) 0).flip();
    }

    /**
     * Checks a header's fixed fields.
     *
     * @param header the first {@link #HEADER} bytes
     * @return the number of queue-pair numbers that follow
     * @throws IllegalArgumentException saying what is wrong
     */
    static int checkHeader(ByteBuffer header, int expectedType, byte[] secret) {
        ByteBuffer b = header.duplicate().order(ByteOrder.BIG_ENDIAN).position(0);
        int magic = b.getInt();
        if (magic != MAGIC) {
            throw new IllegalArgumentException(String.format("bad magic 0x%08x (not a JcclIB peer)", magic));
        }
        int version = b.getShort() & 0xffff;
        if (version != VERSION) {
            throw new IllegalArgumentException("protocol version " + version + ", expected " + VERSION
                    + " (mixed JCCL versions?)");
        }
        int type = b.get() & 0xff;
        if (type != expectedType) {
            throw new IllegalArgumentException("message type " + type + ", expected " + expectedType);
        }
        b.get();
        byte[] got = new byte[16];
        b.get(got);
        if (!MessageDigest.isEqual(got, secret)) {
            throw new IllegalArgumentException("wrong secret (a connection for another listener, or forged)");
        }
        int nqps = b.getShort() & 0xffff;
        if (nqps < 1 || nqps > MAX_QPS) {
            throw new IllegalArgumentException(nqps + " queue pairs, outside [1, " + MAX_QPS + "]");
        }
        return nqps;
    }

    /**
     * @param message a whole message whose header passed {@link #checkHeader}
     * @return the decoded message
     */
    static ConnectionInfo decode(ByteBuffer message) {
        ByteBuffer b = message.duplicate().order(ByteOrder.BIG_ENDIAN).position(0);
        b.getInt();
        b.getShort();
        int type = b.get() & 0xff;
        boolean split = (b.get() & 1) != 0;
        byte[] secret = new byte[16];
        b.get(secret);
        int nqps = b.getShort() & 0xffff;
        int linkLayer = b.get() & 0xff;
        int mtu = b.get() & 0xff;
        int lid = b.getShort() & 0xffff;
        b.getShort();
        byte[] gid = new byte[16];
        b.get(gid);
        long addr = b.getLong();
        int rkey = b.getInt();
        b.getInt();
        int[] qpns = new int[nqps];
        for (int i = 0; i < nqps; i++) {
            qpns[i] = b.getInt();
        }
        return new ConnectionInfo(type, secret, split, new PeerAddress(linkLayer, mtu, lid, gid), addr, rkey, qpns);
    }

    /** @throws IllegalArgumentException if {@code ready} is not a READY message */
    static void checkReady(ByteBuffer ready) {
        ByteBuffer b = ready.duplicate().order(ByteOrder.BIG_ENDIAN).position(0);
        if (b.getInt() != MAGIC || (b.getShort() & 0xffff) != VERSION || (b.get() & 0xff) != READY) {
            throw new IllegalArgumentException("expected READY, got garbage");
        }
    }

    @Override
    public String toString() {
        return "ConnectionInfo[type " + type + ", " + qpns.length + " QPs " + Arrays.toString(qpns) + ", buffer 0x"
                + Long.toHexString(bufferAddress) + "]";
    }

    /**
     * The frames an established side channel carries, 9 bytes each: a type byte and a 64-bit value.
     * {@link #CLOSE} says the peer closed its comm and how many messages it saw complete;
     * {@link #ABORT} says the peer's comm failed. End of stream without CLOSE means the peer died.
     */
    static final class Control {
        static final int SIZE = 9;
        static final byte CLOSE = 'C';
        static final byte ABORT = 'A';

        private Control() {
        }
    }
}
