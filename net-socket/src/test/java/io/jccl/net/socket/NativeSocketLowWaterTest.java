package io.jccl.net.socket;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The mechanism a receiving I/O thread sleeps by ({@code JCCL_SOCKET_LOW_WATER}): with the
 * socket's SO_RCVLOWAT set through {@link NativeSocketIo}, the selector does not report the
 * socket readable while fewer bytes than the mark are queued, and does once they are all there.
 * How many empty reads that saves under load depends on the scheduling (SocketQuietPollTest
 * reports it). If this fails, check {@code NativeSocketIo.receiveLowWater} (SOL_SOCKET and
 * SO_RCVLOWAT's values, the fd it found for the channel).
 */
class NativeSocketLowWaterTest {
    @Test
    void aSelectorWaitsForTheWholeMarkBeforeItReportsTheSocketReadable() throws IOException {
        Assumptions.assumeTrue(NativeSocketIo.isAvailable(),
                () -> "direct socket calls: " + NativeSocketIo.unavailabilityCause());
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel sender = SocketChannel.open(server.getLocalAddress());
                 SocketChannel receiver = server.accept();
                 Selector selector = Selector.open()) {
                int mark = 256 << 10;
                NativeSocketIo io = NativeSocketIo.of(receiver);
                assertNotNull(io, "no direct calls for an accepted channel");
                assertTrue(io.receiveLowWater(mark), "setsockopt(SO_RCVLOWAT) failed");
                receiver.configureBlocking(false);
                receiver.register(selector, SelectionKey.OP_READ);

                // Half the mark, given 100 ms to arrive (loopback delivers it within a millisecond).
                write(sender, mark / 2);
                pause(100);
                assertEquals(0, selector.select(200), "readable with " + mark / 2 + " of the mark's " + mark + " bytes sent");

                write(sender, mark - mark / 2);
                assertEquals(1, selector.select(5_000), "not readable with the whole mark there");
                ByteBuffer all = ByteBuffer.allocateDirect(mark);
                while (all.hasRemaining() && receiver.read(all) > 0) {
                    // A non-blocking read returns what is there: all of it, in one or a few reads.
                }
                assertEquals(mark, all.position(), "bytes read after the wake-up");

                // The default mark again (1): readable as soon as one byte is there.
                assertTrue(io.receiveLowWater(1));
                selector.selectedKeys().clear();
                write(sender, 1);
                assertEquals(1, selector.select(5_000), "not readable with one byte and the mark at 1");
            }
        }
    }

    private static void write(SocketChannel sender, int bytes) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(bytes);
        while (b.hasRemaining()) {
            sender.write(b);
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
