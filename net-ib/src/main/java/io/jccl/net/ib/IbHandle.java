package io.jccl.net.ib;

import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * JcclIB's 128-byte connection handle (NCCL's {@code ncclIbHandle}): where the listener's side
 * channel is, and the secret a connecting peer must present.
 *
 * <pre>
 * 0   magic u64 "JCCLIBH1"
 * 8   address family u8 (4 or 6)   9 reserved u8   10 TCP port u16
 * 12  address[16] (IPv4 in the first 4 bytes)
 * 28  secret[16]
 * 120 connect resume id u64 (0 in a fresh handle; written by the connecting side)
 * </pre>
 *
 * NCCL hands {@code connect} the same handle on every retry; JcclIB keeps the id of its
 * connection in progress in the last 8 bytes, so a copy taken right after {@code listen} (id 0)
 * starts a new connection.
 */
final class IbHandle {
    static final long MAGIC = 0x4a43434c49424831L; // "JCCLIBH1"
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final long FAMILY = 8;
    private static final long PORT = 10;
    private static final long ADDRESS = 12;
    private static final long SECRET = 28;
    private static final long RESUME = 120;
    static final int SECRET_SIZE = 16;

    /** A decoded handle. */
    record Target(InetSocketAddress address, byte[] secret) {
    }

    private IbHandle() {
    }

    static void write(NetHandle handle, InetSocketAddress address, byte[] secret) {
        MemorySegment h = handle.segment();
        h.fill((byte) 0);
        h.set(U64, 0, MAGIC);
        byte[] ip = address.getAddress().getAddress();
        h.set(JAVA_BYTE, FAMILY, (byte) (ip.length == 4 ? 4 : 6));
        h.set(U16, PORT, (short) address.getPort());
        MemorySegment.copy(ip, 0, h, JAVA_BYTE, ADDRESS, ip.length);
        MemorySegment.copy(secret, 0, h, JAVA_BYTE, SECRET, SECRET_SIZE);
    }

    /**
     * @throws NetException {@code ncclInvalidArgument} if the bytes are not a JcclIB handle
     */
    static Target read(NetHandle handle) throws NetException {
        MemorySegment h = handle.segment();
        if (h.get(U64, 0) != MAGIC) {
            throw NetException.invalidArgument("not a JcclIB handle (magic 0x" + Long.toHexString(h.get(U64, 0))
                    + "): was it written by another transport's listen?");
        }
        int family = h.get(JAVA_BYTE, FAMILY);
        int port = h.get(U16, PORT) & 0xffff;
        if ((family != 4 && family != 6) || port == 0) {
            throw NetException.invalidArgument("corrupt JcclIB handle: address family " + family + ", port " + port);
        }
        byte[] ip = new byte[family == 4 ? 4 : 16];
        MemorySegment.copy(h, JAVA_BYTE, ADDRESS, ip, 0, ip.length);
        byte[] secret = new byte[SECRET_SIZE];
        MemorySegment.copy(h, JAVA_BYTE, SECRET, secret, 0, SECRET_SIZE);
        try {
            return new Target(new InetSocketAddress(InetAddress.getByAddress(ip), port), secret);
        } catch (UnknownHostException e) {
            throw NetException.invalidArgument("corrupt JcclIB handle address");
        }
    }

    static long resumeId(NetHandle handle) {
        return handle.segment().get(U64, RESUME);
    }

    static void setResumeId(NetHandle handle, long id) {
        handle.segment().set(U64, RESUME, id);
    }
}
