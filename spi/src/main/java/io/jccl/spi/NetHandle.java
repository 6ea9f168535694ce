package io.jccl.spi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The 128-byte opaque connection handle ({@code NCCL_NET_HANDLE_MAXSIZE}).
 *
 * <p>{@code listen} writes into it; the bytes travel to the peer out of band (NCCL's bootstrap, or
 * JCCL's); the peer passes them to {@code connect}. NCCL hands {@code connect} the <em>same</em>
 * buffer on every retry, so a transport may keep resume state inside it, as NCCL's own transports
 * do; a byte-for-byte copy taken right after {@code listen} must still connect.
 *
 * <p>The bytes live in native memory, so that the native shim can wrap NCCL's own buffer and the
 * native host can pass this one to a C plugin without copying.
 */
public final class NetHandle {
    /** {@code NCCL_NET_HANDLE_MAXSIZE}: the bytes NCCL reserves and ships for a handle. */
    public static final int SIZE = 128;

    private final MemorySegment segment;

    private NetHandle(MemorySegment segment) {
        this.segment = segment;
    }

    /** @return a new zero-filled handle in GC-managed native memory */
    public static NetHandle allocate() {
        return new NetHandle(Arena.ofAuto().allocate(SIZE, 8));
    }

    /**
     * Wraps existing memory, e.g. the {@code void* handle} NCCL passes through the shim. Writes go
     * straight to that memory.
     *
     * @param memory at least {@link #SIZE} bytes; only the first {@link #SIZE} are used
     * @throws IllegalArgumentException if {@code memory} is smaller than {@link #SIZE}
     */
    public static NetHandle wrap(MemorySegment memory) {
        Objects.requireNonNull(memory, "memory");
        if (memory.byteSize() < SIZE) {
            throw new IllegalArgumentException("a handle needs " + SIZE + " bytes, got " + memory.byteSize());
        }
        return new NetHandle(memory.asSlice(0, SIZE));
    }

    /**
     * @param bytes a handle's bytes as received out of band; shorter arrays are zero-padded
     * @return a new handle holding a copy of the bytes
     * @throws IllegalArgumentException if {@code bytes} is longer than {@link #SIZE}
     */
    public static NetHandle fromBytes(byte[] bytes) {
        if (bytes.length > SIZE) {
            throw new IllegalArgumentException("a handle holds at most " + SIZE + " bytes, got " + bytes.length);
        }
        NetHandle h = allocate();
        MemorySegment.copy(bytes, 0, h.segment, ValueLayout.JAVA_BYTE, 0, bytes.length);
        return h;
    }

    /** @return the handle's {@link #SIZE} bytes, for the transport to read and write */
    public MemorySegment segment() {
        return segment;
    }

    /** @return a copy of the bytes, to send to the peer out of band */
    public byte[] toByteArray() {
        return segment.toArray(ValueLayout.JAVA_BYTE);
    }

    /** @return an independent handle with the same bytes */
    public NetHandle copy() {
        NetHandle h = allocate();
        h.segment.copyFrom(segment);
        return h;
    }

    /** Sets every byte to zero. */
    public void clear() {
        segment.fill((byte) 0);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NetHandle other && segment.mismatch(other.segment) == -1;
    }

    @Override
    public int hashCode() {
        int h = 1;
        for (int i = 0; i < SIZE; i += 8) {
            h = 31 * h + Long.hashCode(segment.get(ValueLayout.JAVA_LONG_UNALIGNED, i));
        }
        return h;
    }

    /** @return the bytes in hex, trailing zeros trimmed */
    @Override
    public String toString() {
        byte[] b = toByteArray();
        int end = b.length;
        while (end > 0 && b[end - 1] == 0) {
            end--;
        }
        return "NetHandle[" + HexFormat.of().formatHex(b, 0, end) + "]";
    }
}
