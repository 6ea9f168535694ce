package io.jccl.net.socket;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Direct send/recv calls on a channel's descriptor ({@link NativeSocketIo}): the descriptor found is
 * the channel's own (bytes written on it come out of the peer's channel, and the other way round),
 * and the C library's results map onto NIO's: 0 when nothing is there, -1 at the peer's close, an
 * exception with the C library's words on a reset connection, never a SIGPIPE.
 */
class NativeSocketIoTest {
    private final Arena arena = Arena.ofAuto();

    @BeforeEach
    void needsDirectCalls() {
        assumeTrue(NativeSocketIo.isAvailable(), () -> "direct socket calls unavailable: "
                + NativeSocketIo.unavailabilityCause());
    }

    /** Both ends of a loopback TCP connection in this process, non-blocking. */
    private record Connection(SocketChannel a, SocketChannel b) implements AutoCloseable {
        static Connection open() throws IOException {
            try (ServerSocketChannel server = ServerSocketChannel.open()) {
                server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                SocketChannel a = SocketChannel.open(server.getLocalAddress());
                SocketChannel b = server.accept();
                for (SocketChannel c : new SocketChannel[]{a, b}) {
                    c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    c.configureBlocking(false);
                }
                return new Connection(a, b);
            }
        }

        @Override
        public void close() throws IOException {
            a.close();
            b.close();
        }
    }

    @Test
    void theDescriptorFoundIsTheChannelsOwnOnEitherEnd() throws IOException {
        try (Connection c = Connection.open(); Connection other = Connection.open()) {
            NativeSocketIo a = NativeSocketIo.of(c.a());
            NativeSocketIo b = NativeSocketIo.of(c.b());
            assertNotNull(a, "the connecting end's descriptor was not found");
            assertNotNull(b, "the accepted end's descriptor was not found");
            assertNotEquals(a.fd(), b.fd(), "both ends of a connection in one process have the same local and remote "
                    + "addresses swapped; if this fails, check that both are compared");
            assertNotEquals(a.fd(), NativeSocketIo.descriptorOf(other.a()));

            MemorySegment out = arena.allocate(64);
            for (int i = 0; i < 64; i++) {
                out.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 1));
            }
            assertEquals(64, a.write(out.address(), 64));
            ByteBuffer got = ByteBuffer.allocate(64);
            readFully(c.b(), got);
            assertArrayEquals(out.toArray(ValueLayout.JAVA_BYTE), got.array(), "bytes written directly arrive through NIO");

            c.b().write(ByteBuffer.wrap(new byte[]{9, 8, 7}));
            MemorySegment in = arena.allocate(16);
            long n = 0;
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (n < 3 && System.nanoTime() < deadline) {
                n += a.read(in.address() + n, 16 - n);
            }
            assertEquals(3, n);
            assertArrayEquals(new byte[]{9, 8, 7}, in.asSlice(0, 3).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    @Test
    void aReadThatFindsNothingReturnsZeroAndThePeersCloseMinusOne() throws IOException {
        try (Connection c = Connection.open()) {
            NativeSocketIo a = NativeSocketIo.of(c.a());
            assertNotNull(a);
            MemorySegment in = arena.allocate(16);
            assertEquals(0, a.read(in.address(), 16), "nothing sent: 0, without blocking");
            c.b().close();
            long deadline = System.nanoTime() + 5_000_000_000L;
            long n = 0;
            while (n == 0 && System.nanoTime() < deadline) {
                n = a.read(in.address(), 16);
            }
            assertEquals(-1, n, "the peer's close reads as the end of the stream, as with NIO");
        }
    }

    @Test
    void aWriteToAResetConnectionThrowsTheCLibrarysWordsAndRaisesNoSignal() throws IOException {
        try (Connection c = Connection.open()) {
            NativeSocketIo a = NativeSocketIo.of(c.a());
            assertNotNull(a);
            // A close with unread data (and linger 0) makes the kernel answer with a reset.
            c.b().setOption(StandardSocketOptions.SO_LINGER, 0);
            c.b().close();
            MemorySegment out = arena.allocate(1 << 16);
            IOException e = assertThrows(IOException.class, () -> {
                long deadline = System.nanoTime() + 5_000_000_000L;
                while (System.nanoTime() < deadline) {
                    a.write(out.address(), out.byteSize());
                    Thread.sleep(1);
                }
            }, "writing to a reset connection keeps succeeding");
            String m = e.getMessage();
            assertTrue(m.contains("reset") || m.contains("pipe"), m);
            assertFalse(m.startsWith("send()"), "the C library's words, not a linker failure: " + m);
        } // the JVM is still here: MSG_NOSIGNAL, no SIGPIPE
    }

    @Test
    void anUnconnectedChannelHasNoDescriptorToFind() throws IOException {
        try (SocketChannel c = SocketChannel.open()) {
            assertEquals(-1, NativeSocketIo.descriptorOf(c));
            assertNull(NativeSocketIo.of(c));
        }
    }

    @Test
    void anIpv4AddressMatchesItsMappedFormOnADualStackSocket() throws IOException {
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        mapped[12] = 127;
        mapped[15] = 1;
        assertTrue(NativeSocketIo.sameAddress(mapped, InetAddress.getByName("127.0.0.1")));
        assertFalse(NativeSocketIo.sameAddress(mapped, InetAddress.getByName("127.0.0.2")));
        mapped[11] = 0;
        assertFalse(NativeSocketIo.sameAddress(mapped, InetAddress.getByName("127.0.0.1")), "not a mapped address");
        assertTrue(NativeSocketIo.sameAddress(new byte[]{10, 0, 0, 1}, InetAddress.getByName("10.0.0.1")));
    }

    private static void readFully(SocketChannel c, ByteBuffer b) throws IOException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (b.hasRemaining() && System.nanoTime() < deadline) {
            if (c.read(b) < 0) {
                break;
            }
        }
        assertFalse(b.hasRemaining(), "only " + b.position() + " bytes arrived");
    }
}
