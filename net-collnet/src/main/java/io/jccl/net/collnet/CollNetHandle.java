package io.jccl.net.collnet;

import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * What {@code listen} writes into NCCL's handle and every rank reads at {@code connect}:
 *
 * <pre>
 *  0 u32 magic   4 u8 version   5 u8 placement (0 a rank's thread, 1 a process)   6 u16 port
 *  8 u32 aggregator rank   12 u8 address length (4 or 16)   16 u8[16] address
 * 32 u8[16] secret   48 u8[16] nonce (rank 0's names the group)
 * </pre>
 */
record CollNetHandle(boolean inRank, int aggregatorRank, InetSocketAddress address, byte[] secret, byte[] nonce) {
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    void writeTo(NetHandle handle) {
        MemorySegment s = handle.segment();
        s.fill((byte) 0);
        s.set(U32, 0, Wire.MAGIC);
        s.set(ValueLayout.JAVA_BYTE, 4, (byte) Wire.VERSION);
        s.set(ValueLayout.JAVA_BYTE, 5, (byte) (inRank ? 0 : 1));
        s.set(U16, 6, (short) address.getPort());
        s.set(U32, 8, aggregatorRank);
        byte[] a = address.getAddress().getAddress();
        s.set(ValueLayout.JAVA_BYTE, 12, (byte) a.length);
        MemorySegment.copy(a, 0, s, ValueLayout.JAVA_BYTE, 16, a.length);
        MemorySegment.copy(secret, 0, s, ValueLayout.JAVA_BYTE, 32, 16);
        MemorySegment.copy(nonce, 0, s, ValueLayout.JAVA_BYTE, 48, 16);
    }

    /**
     * @param index the rank whose handle this is, for the message
     * @throws NetException ncclInvalidArgument for a handle JcclCollNet did not write
     */
    static CollNetHandle readFrom(NetHandle handle, int index) throws NetException {
        MemorySegment s = handle.segment();
        int magic = s.get(U32, 0);
        int version = s.get(ValueLayout.JAVA_BYTE, 4);
        if (magic != Wire.MAGIC || version != Wire.VERSION) {
            throw NetException.invalidArgument("rank " + index + "'s handle was not written by JcclCollNet version "
                    + Wire.VERSION + " (magic 0x" + Integer.toHexString(magic) + ", version " + version + ")");
        }
        int placement = s.get(ValueLayout.JAVA_BYTE, 5);
        int port = Short.toUnsignedInt(s.get(U16, 6));
        int rank = s.get(U32, 8);
        int len = s.get(ValueLayout.JAVA_BYTE, 12);
        if ((placement != 0 && placement != 1) || (len != 4 && len != 16) || port == 0) {
            throw NetException.invalidArgument("rank " + index + "'s JcclCollNet handle is malformed (placement "
                    + placement + ", address length " + len + ", port " + port + ")");
        }
        byte[] a = new byte[len];
        MemorySegment.copy(s, ValueLayout.JAVA_BYTE, 16, a, 0, len);
        byte[] secret = new byte[16];
        byte[] nonce = new byte[16];
        MemorySegment.copy(s, ValueLayout.JAVA_BYTE, 32, secret, 0, 16);
        MemorySegment.copy(s, ValueLayout.JAVA_BYTE, 48, nonce, 0, 16);
        try {
            return new CollNetHandle(placement == 0, rank, new InetSocketAddress(InetAddress.getByAddress(a), port),
                    secret, nonce);
        } catch (UnknownHostException e) {
            throw NetException.invalidArgument("rank " + index + "'s JcclCollNet handle has a bad address");
        }
    }

    /** @return whether two ranks' handles agree on where the aggregator runs */
    boolean samePlacement(CollNetHandle other) {
        return inRank == other.inRank && (inRank ? aggregatorRank == other.aggregatorRank
                : address.equals(other.address) && Arrays.equals(secret, other.secret));
    }
}
