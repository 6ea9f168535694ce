package com.example.uds;

import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * The 128 bytes {@code listen} writes and {@code connect} reads:
 *
 * <pre>
 * offset 0   8 bytes  magic "EXUDS" + version 1, so that a handle of another transport is refused
 * offset 8  16 bytes  cookie: a random secret per listen comm, which the connector presents first
 * offset 24  2 bytes  length of the socket path in bytes
 * offset 26  n bytes  the socket path, UTF-8 (n &lt;= 102)
 * </pre>
 *
 * Self-contained bytes only (no pointers, nothing keyed by the Java object), because NCCL ships
 * them to another process.
 */
final class UdsHandle {
    static final long MAGIC = 0x4558_5544_5300_0001L;
    static final int COOKIE_BYTES = 16;
    static final int MAX_PATH_BYTES = NetHandle.SIZE - 26;

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** What a handle says: where the listener is and the secret it expects. */
    record Contents(Path path, byte[] cookie) {
    }

    private UdsHandle() {
    }

    static void write(NetHandle handle, Path path, byte[] cookie) throws NetException {
        byte[] p = path.toString().getBytes(StandardCharsets.UTF_8);
        if (p.length > MAX_PATH_BYTES) {
            throw NetException.invalidUsage(ExampleUdsPlugin.NAME + ": socket path " + path + " has " + p.length
                    + " bytes, the handle holds " + MAX_PATH_BYTES + "; set " + ExampleUdsPlugin.DIR_VARIABLE
                    + " to a shorter directory");
        }
        MemorySegment s = handle.segment();
        s.fill((byte) 0);
        s.set(LONG, 0, MAGIC);
        MemorySegment.copy(cookie, 0, s, ValueLayout.JAVA_BYTE, 8, COOKIE_BYTES);
        s.set(SHORT, 24, (short) p.length);
        MemorySegment.copy(p, 0, s, ValueLayout.JAVA_BYTE, 26, p.length);
    }

    /** @throws NetException ncclInvalidArgument, in one line, for bytes no ExampleUds listen wrote */
    static Contents read(NetHandle handle) throws NetException {
        MemorySegment s = handle.segment();
        long magic = s.get(LONG, 0);
        if (magic != MAGIC) {
            throw NetException.invalidArgument(ExampleUdsPlugin.NAME + ": not an " + ExampleUdsPlugin.NAME
                    + " handle (magic 0x" + Long.toHexString(magic) + ", expected 0x" + Long.toHexString(MAGIC) + ")");
        }
        int n = Short.toUnsignedInt(s.get(SHORT, 24));
        if (n == 0 || n > MAX_PATH_BYTES) {
            throw NetException.invalidArgument(ExampleUdsPlugin.NAME + ": corrupt handle (socket path length " + n
                    + ", must be 1.." + MAX_PATH_BYTES + ")");
        }
        byte[] cookie = s.asSlice(8, COOKIE_BYTES).toArray(ValueLayout.JAVA_BYTE);
        String path = new String(s.asSlice(26, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
        try {
            return new Contents(Path.of(path), cookie);
        } catch (InvalidPathException e) {
            throw NetException.invalidArgument(ExampleUdsPlugin.NAME + ": corrupt handle (socket path: "
                    + e.getMessage() + ")");
        }
    }
}
