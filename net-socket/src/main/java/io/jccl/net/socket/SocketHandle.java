package io.jccl.net.socket;

import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

/**
 * The layout of a JcclSocket {@link NetHandle} (64 of its 128 bytes, little-endian):
 *
 * <pre>
 *  0  u32  magic "JSK1"
 *  4  u8   version
 *  5  u8   address family (4 or 6)
 *  6  u16  port
 *  8  u8[16] address (IPv4 in the first 4 bytes)
 * 24  u8[16] listener secret: every connection must present it
 * 40  u16  data streams the listener wants
 * 42  u16  I/O threads the listener wants
 * 44  u32  striping chunk size: both ends must cut messages the same way
 * 48  u64  resume cookie, written by connect: the pending connection to resume (0 = none yet)
 * 56  u64  address of the handle memory the cookie was written into
 * </pre>
 *
 * <p>The resume cookie lets {@code connect} be called again with the same handle, as NCCL does, while
 * a byte-for-byte copy of a fresh handle (cookie 0, or a cookie written into other memory) starts a
 * connection of its own.
 */
final class SocketHandle {
    static final int MAGIC = 0x314b534a; // the bytes "JSK1", read little-endian
    // 2: every comm has a liveness socket. 3: 64 EAGER slots, CTS frames held back 32 at a time (a
    // version-2 receiver keeps 16 slots and would fail a version-3 sender mid-run, not at connect).
    // 4: inline payloads up to 64 KiB + 64 B (a version-3 receiver refuses more than 64 KiB)
    static final byte VERSION = 4;
    static final int SECRET_BYTES = 16;

    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final long OFF_MAGIC = 0;
    private static final long OFF_VERSION = 4;
    private static final long OFF_FAMILY = 5;
    private static final long OFF_PORT = 6;
    private static final long OFF_ADDRESS = 8;
    private static final long OFF_SECRET = 24;
    private static final long OFF_STREAMS = 40;
    private static final long OFF_THREADS = 42;
    private static final long OFF_MIN_CHUNK = 44;
    private static final long OFF_COOKIE = 48;
    private static final long OFF_COOKIE_OWNER = 56;

    /** What a connecting side reads from a handle. */
    record Contents(InetSocketAddress address, byte[] secret, int streams, int threads, int minChunkBytes) {
    }

    private SocketHandle() {
    }

    static void write(NetHandle handle, InetSocketAddress address, byte[] secret, int streams, int threads,
                      int minChunkBytes) {
        MemorySegment h = handle.segment();
        h.fill((byte) 0);
        h.set(U32, OFF_MAGIC, MAGIC);
        h.set(ValueLayout.JAVA_BYTE, OFF_VERSION, VERSION);
        byte[] ip = address.getAddress().getAddress();
        h.set(ValueLayout.JAVA_BYTE, OFF_FAMILY, (byte) (ip.length == 4 ? 4 : 6));
        h.set(U16, OFF_PORT, (short) address.getPort());
        MemorySegment.copy(ip, 0, h, ValueLayout.JAVA_BYTE, OFF_ADDRESS, ip.length);
        MemorySegment.copy(secret, 0, h, ValueLayout.JAVA_BYTE, OFF_SECRET, SECRET_BYTES);
        h.set(U16, OFF_STREAMS, (short) streams);
        h.set(U16, OFF_THREADS, (short) threads);
        h.set(U32, OFF_MIN_CHUNK, minChunkBytes);
    }

    /**
     * @throws NetException {@code ncclInvalidArgument} if the bytes are not a JcclSocket handle
     */
    static Contents read(NetHandle handle) throws NetException {
        MemorySegment h = handle.segment();
        if (h.get(U32, OFF_MAGIC) != MAGIC) {
            throw NetException.invalidArgument("not a JcclSocket handle (bad magic 0x"
                    + Integer.toHexString(h.get(U32, OFF_MAGIC)) + "): was it written by another transport's listen?");
        }
        if (h.get(ValueLayout.JAVA_BYTE, OFF_VERSION) != VERSION) {
            throw NetException.invalidArgument("JcclSocket handle version " + h.get(ValueLayout.JAVA_BYTE, OFF_VERSION)
                    + " is not supported (this build speaks " + VERSION + ")");
        }
        int family = h.get(ValueLayout.JAVA_BYTE, OFF_FAMILY);
        if (family != 4 && family != 6) {
            throw NetException.invalidArgument("malformed JcclSocket handle: address family " + family);
        }
        byte[] ip = new byte[family == 4 ? 4 : 16];
        MemorySegment.copy(h, ValueLayout.JAVA_BYTE, OFF_ADDRESS, ip, 0, ip.length);
        int port = Short.toUnsignedInt(h.get(U16, OFF_PORT));
        int streams = Short.toUnsignedInt(h.get(U16, OFF_STREAMS));
        int threads = Short.toUnsignedInt(h.get(U16, OFF_THREADS));
        int minChunk = h.get(U32, OFF_MIN_CHUNK);
        if (port == 0 || streams > SocketConfig.MAX_STREAMS || threads > SocketConfig.MAX_THREADS
                || (threads == 0) != (streams == 0) || minChunk < 4096) {
            throw NetException.invalidArgument("malformed JcclSocket handle: port " + port + ", " + streams
                    + " streams, " + threads + " threads, chunk " + minChunk);
        }
        byte[] secret = new byte[SECRET_BYTES];
        MemorySegment.copy(h, ValueLayout.JAVA_BYTE, OFF_SECRET, secret, 0, SECRET_BYTES);
        try {
            InetAddress a = InetAddress.getByAddress(ip);
            if (family == 4 != a instanceof Inet4Address) {
                throw NetException.invalidArgument("malformed JcclSocket handle: address does not match its family");
            }
            return new Contents(new InetSocketAddress(a, port), secret, streams, threads, minChunk);
        } catch (UnknownHostException e) {
            throw NetException.invalidArgument("malformed JcclSocket handle address: " + e.getMessage());
        }
    }

    /** @return the pending-connect cookie this very handle memory carries, or 0 */
    static long cookie(NetHandle handle) {
        MemorySegment h = handle.segment();
        return h.get(U64, OFF_COOKIE_OWNER) == h.address() ? h.get(U64, OFF_COOKIE) : 0;
    }

    static void setCookie(NetHandle handle, long cookie) {
        MemorySegment h = handle.segment();
        h.set(U64, OFF_COOKIE, cookie);
        h.set(U64, OFF_COOKIE_OWNER, cookie == 0 ? 0 : h.address());
    }
}
