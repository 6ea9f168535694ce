package io.jccl.net.socket;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A polling caller moves a stream's bytes only when the stream's I/O thread is starved: running
 * but without a turn of its duty cycle for JCCL_SOCKET_HELP_US. Here the worker's thread is never
 * started, which is what a runnable thread without a core looks like from outside. If this fails,
 * check {@link StreamWorker#helpIfStarved()}.
 */
class StreamWorkerHelpTest {
    private static final int BYTES = 4096;

    @Test
    void aCallerMovesTheBytesOfAStarvedWorkerOnlyAfterTheBound() throws Exception {
        try (Arena arena = Arena.ofConfined(); Pair p = new Pair()) {
            SendRequest r = queued(p, arena);
            StreamWorker w = new StreamWorker(null, new DataStream[] {p.stream}, 0, 500_000_000L, "test");
            w.helpIfStarved();
            assertEquals(BYTES, r.pending(), "within 500 ms of its last cycle the worker is not starved");
            Thread.sleep(550);
            w.helpIfStarved();
            assertEquals(0, r.pending(), "after 500 ms without a cycle the caller wrote the chunk itself");
        }
    }

    @Test
    void withHelpOffTheCallerNeverMovesTheBytes() throws Exception {
        try (Arena arena = Arena.ofConfined(); Pair p = new Pair()) {
            SendRequest r = queued(p, arena);
            StreamWorker w = new StreamWorker(null, new DataStream[] {p.stream}, 0, 0, "test");
            Thread.sleep(20);
            w.helpIfStarved();
            assertEquals(BYTES, r.pending(), "JCCL_SOCKET_HELP_US=0: the bytes are the I/O thread's alone");
        }
    }

    private static SendRequest queued(Pair p, Arena arena) {
        MemoryRegion region = new MemoryRegion(null, arena.allocate(BYTES), 2);
        SendRequest r = new SendRequest(null, 0);
        r.addPending(BYTES);
        p.stream.offer(region, 0, BYTES, r);
        return r;
    }

    /** A connected, non-blocking loopback socket pair; the stream writes on the client end. */
    private static final class Pair implements AutoCloseable {
        final ServerSocketChannel server = ServerSocketChannel.open();
        final SocketChannel client;
        final SocketChannel accepted;
        final DataStream stream;

        Pair() throws IOException {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            client = SocketChannel.open(server.getLocalAddress());
            accepted = server.accept();
            client.configureBlocking(false);
            stream = new DataStream(1, client, true, false, null);
        }

        @Override
        public void close() throws IOException {
            client.close();
            accepted.close();
            server.close();
        }
    }
}
