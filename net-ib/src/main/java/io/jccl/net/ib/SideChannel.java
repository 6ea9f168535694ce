package io.jccl.net.ib;

import jdk.net.ExtendedSocketOptions;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The TCP connection beside every JcclIB connection: it carries the handshake, then stays open so
 * that each side learns at once when the other closes, fails or dies (see {@link IbComm}).
 */
final class SideChannel {
    private SideChannel() {
    }

    /**
     * Non-blocking, no Nagle delay, and keepalive probes that notice a vanished host within about
     * {@code peerTimeoutMs}.
     */
    static void configure(SocketChannel ch, int peerTimeoutMs) throws IOException {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
        int seconds = Math.max(2, (peerTimeoutMs + 999) / 1000);
        int idle = Math.max(1, seconds / 2);
        try {
            ch.setOption(ExtendedSocketOptions.TCP_KEEPIDLE, idle);
            ch.setOption(ExtendedSocketOptions.TCP_KEEPINTERVAL, 1);
            ch.setOption(ExtendedSocketOptions.TCP_KEEPCOUNT, Math.max(1, seconds - idle));
        } catch (UnsupportedOperationException ignored) {
            // not on this platform: the OS keepalive defaults apply
        }
    }

    /**
     * Reads what is available into {@code buffer}.
     *
     * @return whether the buffer is full
     * @throws IOException at the end of the stream or on a socket error
     */
    static boolean fill(SocketChannel ch, ByteBuffer buffer) throws IOException {
        if (ch.read(buffer) < 0) {
            throw new IOException("the peer closed the side channel during the handshake");
        }
        return !buffer.hasRemaining();
    }

    /** @return whether everything was written */
    static boolean drain(SocketChannel ch, ByteBuffer buffer) throws IOException {
        ch.write(buffer);
        return !buffer.hasRemaining();
    }

    /**
     * @param header a buffer of {@link ConnectionInfo#HEADER} bytes, full
     * @param nqps   the queue-pair count it announced
     * @return a buffer for the whole message, holding the header, positioned after it
     */
    static ByteBuffer grow(ByteBuffer header, int nqps) {
        ByteBuffer whole = ByteBuffer.allocate(ConnectionInfo.HEADER + 4 * nqps);
        header.flip();
        whole.put(header);
        return whole;
    }
}
