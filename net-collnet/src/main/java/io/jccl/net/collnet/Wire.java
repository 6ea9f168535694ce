package io.jccl.net.collnet;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * JcclCollNet's frames, little-endian.
 *
 * <pre>
 * hello, rank to aggregator, 64 bytes, first on every connection:
 *   0 u32 magic   4 u8 version   5 u8 kind (0 data, 1 heartbeat)   8 u8[16] secret
 *  24 u8[16] group id (rank 0's handle nonce)   40 u32 ranks   44 u32 rank
 * answer, aggregator to rank, once the whole group has joined (or failed to):
 *   0 u32 magic   4 i32 status (0 joined)   8 u32 chunk bytes   12 u32 window   16 u32 text length, text
 * chunk, rank to aggregator, 16 bytes then the data:
 *   0 u64 chunk number (counted over the comm's life)   8 u32 bytes   12 u8 type   13 u8 op
 * result, aggregator to rank, 16 bytes then the reduced data:
 *   0 u64 chunk number   8 u32 bytes   12 i32 status; non-zero: the group failed, and the bytes
 *   that follow are the reason, UTF-8
 * heartbeat: one byte each way, every period.
 * </pre>
 */
final class Wire {
    static final int MAGIC = 0x314E434A; // "JCN1"
    static final int VERSION = 1;
    static final int HELLO_BYTES = 64;
    static final int KIND_DATA = 0;
    static final int KIND_HEARTBEAT = 1;
    static final int HEADER_BYTES = 16;
    static final int MAX_TEXT = 4096;

    private Wire() {
    }

    static ByteBuffer hello(int kind, byte[] secret, byte[] group, int nranks, int rank) {
        ByteBuffer b = ByteBuffer.allocate(HELLO_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).put((byte) VERSION).put((byte) kind).putShort((short) 0).put(secret).put(group).putInt(nranks)
                .putInt(rank);
        return b.clear();
    }

    static ByteBuffer answer(int status, int chunkBytes, int window, String text) {
        byte[] t = text == null ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(t.length, MAX_TEXT);
        ByteBuffer b = ByteBuffer.allocate(20 + n).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(MAGIC).putInt(status).putInt(chunkBytes).putInt(window).putInt(n).put(t, 0, n);
        return b.flip();
    }

    /** Reads exactly {@code b.remaining()} bytes from a non-blocking channel within the deadline. */
    static void readFully(SocketChannel ch, ByteBuffer b, long deadlineNanos, String what) throws IOException {
        try (Selector sel = Selector.open()) {
            ch.register(sel, SelectionKey.OP_READ);
            while (b.hasRemaining()) {
                if (ch.read(b) < 0) {
                    throw new EOFException("connection closed while reading " + what);
                }
                if (!b.hasRemaining()) {
                    break;
                }
                long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    throw new SocketTimeoutException("timed out reading " + what);
                }
                sel.select(left);
                sel.selectedKeys().clear();
            }
        }
    }

    /** Writes all of {@code b} to a non-blocking channel within the deadline. */
    static void writeFully(SocketChannel ch, ByteBuffer b, long deadlineNanos, String what) throws IOException {
        try (Selector sel = Selector.open()) {
            ch.register(sel, SelectionKey.OP_WRITE);
            while (b.hasRemaining()) {
                ch.write(b);
                if (!b.hasRemaining()) {
                    break;
                }
                long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    throw new SocketTimeoutException("timed out writing " + what);
                }
                sel.select(left);
                sel.selectedKeys().clear();
            }
        }
    }

    /** Reads an answer: the status and text, or the group's chunk size and window. */
    record Answer(int status, int chunkBytes, int window, String text) {
    }

    static Answer readAnswer(SocketChannel ch, long deadlineNanos) throws IOException {
        ByteBuffer head = ByteBuffer.allocate(20).order(ByteOrder.LITTLE_ENDIAN);
        readFully(ch, head, deadlineNanos, "the aggregator's answer");
        head.flip();
        if (head.getInt() != MAGIC) {
            throw new IOException("the aggregator's answer has a bad magic number: not a JcclCollNet aggregator");
        }
        int status = head.getInt();
        int chunk = head.getInt();
        int window = head.getInt();
        int n = head.getInt();
        if (n < 0 || n > MAX_TEXT) {
            throw new IOException("the aggregator's answer has a text of " + n + " bytes");
        }
        ByteBuffer text = ByteBuffer.allocate(n);
        readFully(ch, text, deadlineNanos, "the aggregator's answer");
        return new Answer(status, chunk, window, new String(text.array(), StandardCharsets.UTF_8));
    }
}
