package io.jccl.net.socket;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * The inbound side of a control stream, used by the comm's caller thread only: a read buffer that
 * the comm parses frames from. Payload that follows a frame can be copied out of the buffer, or, once
 * the buffer is empty, read straight into registered memory.
 */
final class ControlIn {
    static final int BUFFER_BYTES = 128 << 10;
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final SocketChannel channel;
    /** Direct socket calls on the channel's descriptor, or null for the channel's own (NIO). */
    private volatile NativeSocketIo direct;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_BYTES);
    private final MemorySegment memory = MemorySegment.ofBuffer(buffer);
    /** Bytes [parsed, filled) of the buffer are received and not yet consumed. */
    private int parsed;
    private int filled;
    /**
     * A read of this pass returned less than it asked for: the socket had nothing more then, so
     * another read in the same pass would only cost a syscall that finds nothing.
     */
    private boolean drained;

    ControlIn(SocketChannel channel, NativeSocketIo direct) {
        this.channel = channel;
        this.direct = direct;
    }

    /** Before the channel closes: no direct call may name its descriptor after that. */
    void stopDirectCalls() {
        direct = null;
    }

    /** Starts a pass over the comm's inbound frames: the next read goes to the socket again. */
    void newPass() {
        drained = false;
    }

    /** @return whether a read of this pass found the socket emptied */
    boolean drained() {
        return drained;
    }

    /** @return bytes received and not yet consumed */
    int available() {
        return filled - parsed;
    }

    /**
     * Reads what the socket has, without blocking, making room first if needed.
     *
     * @return bytes read
     * @throws EOFException if the peer closed the connection
     */
    int fill() throws IOException {
        return fill(BUFFER_BYTES);
    }

    /**
     * Reads at most {@code atMost} bytes. A comm that expects a frame header followed by a large
     * payload reads just the header, so the payload lands straight in registered memory instead of
     * being read ahead into this buffer and copied out.
     */
    int fill(int atMost) throws IOException {
        if (parsed == filled) {
            parsed = 0;
            filled = 0;
        } else if (filled == BUFFER_BYTES || (parsed > BUFFER_BYTES / 2)) {
            MemorySegment.copy(memory, parsed, memory, 0, filled - parsed);
            filled -= parsed;
            parsed = 0;
        }
        if (filled == BUFFER_BYTES) {
            return 0;
        }
        int asked = (int) Math.min(BUFFER_BYTES - filled, (long) atMost);
        NativeSocketIo d = direct;
        int n;
        if (d != null) {
            n = (int) d.read(memory.address() + filled, asked);
        } else {
            buffer.limit(filled + asked).position(filled);
            n = channel.read(buffer);
        }
        if (n < 0) {
            throw new EOFException("the peer closed the connection");
        }
        filled += n;
        drained = n < asked;
        return n;
    }

    byte byteAt(int i) {
        return memory.get(ValueLayout.JAVA_BYTE, parsed + i);
    }

    int intAt(int i) {
        return memory.get(I32, parsed + i);
    }

    long longAt(int i) {
        return memory.get(I64, parsed + i);
    }

    void consume(int n) {
        parsed += n;
    }

    /** Copies {@code n} buffered bytes to {@code target} and consumes them. */
    void copyTo(MemorySegment target, long targetOffset, int n) {
        MemorySegment.copy(memory, parsed, target, targetOffset, n);
        parsed += n;
    }

    /**
     * Reads payload straight from the socket into registered memory; only when nothing is buffered.
     *
     * @return bytes read, 0 if none are there yet
     */
    int readDirect(MemoryRegion region, long offset, int length) throws IOException {
        NativeSocketIo d = direct;
        if (d != null && region.isReleased()) {
            // A direct call writes to the address as it is: never into memory given back.
            throw new IOException("a receive's registration was released before the receive completed");
        }
        int n = d != null ? (int) d.read(region.memory.address() + offset, length)
                : channel.read(region.view(0, offset, length));
        if (n < 0) {
            throw new EOFException("the peer closed the connection");
        }
        return n;
    }
}
