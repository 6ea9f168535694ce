package io.jccl.bench;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The bare OS path every transport is measured against: one TCP connection between two threads,
 * blocking reads and writes of direct buffers (no copies in Java), TCP_NODELAY.
 */
public final class RawSocketBaseline implements AutoCloseable {
    private final SocketChannel client;
    private final SocketChannel server;

    public RawSocketBaseline() throws IOException {
        InetAddress address = LocalAddress.pick();
        try (ServerSocketChannel listener = ServerSocketChannel.open()) {
            listener.bind(new InetSocketAddress(address, 0));
            client = SocketChannel.open(listener.getLocalAddress());
            server = listener.accept();
        }
        for (SocketChannel c : new SocketChannel[] {client, server}) {
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
        }
    }

    /** @return GB/s (1e9 bytes per second) of {@code messages} messages of {@code size} bytes, client to server, one buffer per side */
    public double throughputGBps(int size, long messages) throws Exception {
        return throughputGBps(size, 1, messages);
    }

    /**
     * @param buffers how many distinct {@code size}-byte buffers each side walks through in turn: the
     *                transport under test keeps {@code depth} messages in flight in as many buffers, and
     *                a baseline that reused one cache-hot buffer would compare different memory traffic
     * @return GB/s (1e9 bytes per second) of {@code messages} messages of {@code size} bytes, client to server
     */
    public double throughputGBps(int size, int buffers, long messages) throws Exception {
        int slot = Math.max(size, 1);
        ByteBuffer out = ByteBuffer.allocateDirect(slot * buffers);
        ByteBuffer in = ByteBuffer.allocateDirect(slot * buffers);
        Throwable[] failure = new Throwable[1];
        long t0 = System.nanoTime();
        Thread writer = Measure.start("raw-writer", () -> {
            for (long m = 0; m < messages; m++) {
                int at = (int) (m % buffers) * slot;
                out.limit(at + size).position(at);
                while (out.hasRemaining()) {
                    client.write(out);
                }
            }
        }, failure);
        Thread reader = Measure.start("raw-reader", () -> {
            for (long m = 0; m < messages; m++) {
                int at = (int) (m % buffers) * slot;
                in.limit(at + size).position(at);
                while (in.hasRemaining()) {
                    if (server.read(in) < 0) {
                        throw new EOFException();
                    }
                }
            }
        }, failure);
        Measure.join(failure, writer, reader);
        return Measure.gbPerSecond(size * messages, System.nanoTime() - t0);
    }

    /** @return the median one-way latency in microseconds (half a round trip) of {@code size}-byte ping-pongs */
    public double pingPongMicros(int size, int iterations, int warmup) throws Exception {
        ByteBuffer ping = ByteBuffer.allocateDirect(size);
        ByteBuffer pong = ByteBuffer.allocateDirect(size);
        Throwable[] failure = new Throwable[1];
        long[] rtt = new long[iterations];
        Thread echo = Measure.start("raw-echo", () -> {
            for (int i = 0; i < iterations + warmup; i++) {
                readFully(server, pong.clear());
                server.write(pong.flip());
            }
        }, failure);
        for (int i = 0; i < iterations + warmup; i++) {
            long t0 = System.nanoTime();
            client.write(ping.clear());
            readFully(client, ping.clear());
            if (i >= warmup) {
                rtt[i - warmup] = System.nanoTime() - t0;
            }
        }
        Measure.join(failure, echo);
        return Measure.median(rtt) / 2e3;
    }

    /**
     * The kernel's share of a small message, without a second thread: one thread writes
     * {@code size} bytes on the client and reads them on the server, {@code iterations} times.
     *
     * @return mean nanoseconds per message
     */
    public double oneThreadNanos(int size, int iterations, int warmup) throws Exception {
        ByteBuffer out = ByteBuffer.allocateDirect(size);
        ByteBuffer in = ByteBuffer.allocateDirect(size);
        long t0 = 0;
        for (int i = 0; i < iterations + warmup; i++) {
            if (i == warmup) {
                t0 = System.nanoTime();
            }
            client.write(out.clear());
            readFully(server, in.clear());
        }
        return (System.nanoTime() - t0) / (double) iterations;
    }

    private static void readFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new EOFException();
            }
        }
    }

    @Override
    public void close() throws IOException {
        client.close();
        server.close();
    }
}
