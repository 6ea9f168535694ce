package io.jccl.core.bootstrap;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A bootstrap listener and the thread that serves it: accepts connections, runs the server side
 * of {@link SecretHandshake} on each without blocking, then reads length-prefixed frames and hands
 * them to a {@link Handler}. A connection that sends garbage, proves nothing, or stays silent
 * through the handshake is dropped, and the listener carries on.
 *
 * <p>Frame: {@code length(4) src(4) tag(4) payload(length)}.
 */
final class BootstrapServer implements AutoCloseable {
    static final int FRAME_HEADER = 12;
    static final int MAX_PAYLOAD = 16 << 20;
    private static final long HANDSHAKE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** What the server reports; called on the server's thread. */
    interface Handler {
        /** A frame from an authenticated connection. */
        void onFrame(Inbound from, int src, int tag, byte[] payload);

        /** An authenticated connection ended; {@code cause} says why (end of stream, reset, protocol error). */
        void onClosed(Inbound from, String cause);

        /** Called about every tick interval, and after each batch of events. */
        void onTick(long nowNanos);

        /** A connection was dropped before it authenticated. */
        void onDropped(String remote, String why);
    }

    /** Where a connection is: the two handshake messages, then frame headers and payloads. */
    private enum State { HELLO, PROOF, HEADER, PAYLOAD }

    /** One accepted connection. */
    static final class Inbound {
        final SocketChannel channel;
        final String remote;
        private final SecretHandshake.Server handshake;
        private final long acceptedNanos;
        private SecretHandshake.Identity identity;
        private State state = State.HELLO;
        private ByteBuffer reading = ByteBuffer.allocate(SecretHandshake.HELLO_BYTES);
        private int frameSrc;
        private int frameTag;

        Inbound(SocketChannel channel, String remote, byte[] secret, long now) {
            this.channel = channel;
            this.remote = remote;
            this.handshake = new SecretHandshake.Server(secret);
            this.acceptedNanos = now;
        }

        /** @return who authenticated, or {@code null} during the handshake */
        SecretHandshake.Identity identity() {
            return identity;
        }

        /**
         * Writes a frame back on this connection (the root's replies). Blocks for at most a second:
         * replies are small.
         */
        void send(int src, int tag, byte[] payload) throws IOException {
            ByteBuffer b = ByteBuffer.allocate(FRAME_HEADER + payload.length).putInt(payload.length).putInt(src)
                    .putInt(tag).put(payload).flip();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (b.hasRemaining()) {
                if (channel.write(b) == 0) {
                    if (System.nanoTime() > deadline) {
                        throw new IOException("peer " + remote + " does not read its bootstrap replies");
                    }
                    Thread.onSpinWait();
                }
            }
        }
    }

    private final ServerSocketChannel server;
    private final Selector selector;
    private final byte[] secret;
    private final Handler handler;
    private final long tickNanos;
    private final Thread thread;
    private final List<Inbound> handshaking = new ArrayList<>();
    private volatile boolean stopping;

    /**
     * Binds and starts serving.
     *
     * @param bind       address to listen on (port 0 for any)
     * @param threadName name of the serving thread
     * @param tickNanos  how often {@link Handler#onTick} runs at least
     */
    BootstrapServer(InetSocketAddress bind, byte[] secret, Handler handler, String threadName, long tickNanos)
            throws IOException {
        this.secret = secret;
        this.handler = handler;
        this.tickNanos = tickNanos;
        this.server = ServerSocketChannel.open();
        try {
            server.bind(bind, 1024);
            server.configureBlocking(false);
            this.selector = Selector.open();
            server.register(selector, SelectionKey.OP_ACCEPT);
        } catch (IOException e) {
            server.close();
            throw e;
        }
        this.thread = new Thread(this::run, threadName);
        thread.setDaemon(true);
        thread.start();
    }

    /** @return the address connections reach this server at */
    InetSocketAddress address() throws IOException {
        return (InetSocketAddress) server.getLocalAddress();
    }

    private void run() {
        long nextTick = System.nanoTime() + tickNanos;
        try {
            while (!stopping) {
                long wait = Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextTick - System.nanoTime()));
                selector.select(wait);
                for (SelectionKey key : selector.selectedKeys()) {
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        accept();
                    } else if (key.isReadable()) {
                        read(key, (Inbound) key.attachment());
                    }
                }
                selector.selectedKeys().clear();
                long now = System.nanoTime();
                dropSlowHandshakes(now);
                if (now - nextTick >= 0) {
                    nextTick = now + tickNanos;
                }
                handler.onTick(now);
            }
        } catch (IOException | ClosedSelectorException e) {
            if (!stopping) {
                handler.onDropped("listener", "bootstrap listener failed: " + e);
            }
        }
    }

    private void accept() throws IOException {
        SocketChannel c;
        while ((c = server.accept()) != null) {
            c.configureBlocking(false);
            c.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
            Inbound in = new Inbound(c, String.valueOf(c.getRemoteAddress()), secret, System.nanoTime());
            c.register(selector, SelectionKey.OP_READ, in);
            handshaking.add(in);
        }
    }

    private void dropSlowHandshakes(long now) {
        for (int i = handshaking.size() - 1; i >= 0; i--) {
            Inbound in = handshaking.get(i);
            if (in.identity != null || !in.channel.isOpen()) {
                handshaking.remove(i);
            } else if (now - in.acceptedNanos > HANDSHAKE_TIMEOUT_NANOS) {
                handshaking.remove(i);
                drop(in, "no handshake within 10 s");
            }
        }
    }

    private void read(SelectionKey key, Inbound in) {
        try {
            while (true) {
                int n = in.channel.read(in.reading);
                if (n < 0) {
                    end(in, "connection closed");
                    return;
                }
                if (in.reading.hasRemaining()) {
                    return;
                }
                if (!advance(in)) {
                    return;
                }
            }
        } catch (IOException e) {
            end(in, e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    /** A buffer filled: move the connection's state on. @return whether to keep reading */
    private boolean advance(Inbound in) throws IOException {
        ByteBuffer b = in.reading.flip();
        switch (in.state) {
            case HELLO -> {
                byte[] challenge = in.handshake.hello(b);
                if (challenge == null) {
                    drop(in, "not a JCCL bootstrap connection (wrong magic)");
                    return false;
                }
                ByteBuffer out = ByteBuffer.wrap(challenge);
                in.channel.write(out);
                if (out.hasRemaining()) {
                    drop(in, "could not send the handshake challenge");
                    return false;
                }
                in.state = State.PROOF;
                in.reading = ByteBuffer.allocate(SecretHandshake.PROOF_BYTES);
                return true;
            }
            case PROOF -> {
                SecretHandshake.Identity id = in.handshake.verify(b);
                if (id == null) {
                    drop(in, "wrong secret");
                    return false;
                }
                in.identity = id;
                in.state = State.HEADER;
                in.reading = ByteBuffer.allocate(FRAME_HEADER);
                return true;
            }
            case HEADER -> {
                int length = b.getInt();
                in.frameSrc = b.getInt();
                in.frameTag = b.getInt();
                if (length < 0 || length > MAX_PAYLOAD) {
                    end(in, "bootstrap frame of " + length + " bytes");
                    return false;
                }
                if (length > 0) {
                    in.state = State.PAYLOAD;
                    in.reading = ByteBuffer.allocate(length);
                    return true;
                }
                in.reading = ByteBuffer.allocate(FRAME_HEADER);
                handler.onFrame(in, in.frameSrc, in.frameTag, new byte[0]);
                return in.channel.isOpen();
            }
            default -> {
                byte[] payload = b.array();
                in.state = State.HEADER;
                in.reading = ByteBuffer.allocate(FRAME_HEADER);
                handler.onFrame(in, in.frameSrc, in.frameTag, payload);
                return in.channel.isOpen();
            }
        }
    }

    private void drop(Inbound in, String why) {
        closeQuietly(in.channel);
        handler.onDropped(in.remote, why);
    }

    private void end(Inbound in, String why) {
        closeQuietly(in.channel);
        if (in.identity != null) {
            handler.onClosed(in, why);
        } else {
            handler.onDropped(in.remote, why);
        }
    }

    static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // Closing: nothing left to do with the error.
        }
    }

    /** Stops the thread (waiting up to a second) and closes the listener and every connection. */
    @Override
    public void close() {
        stopping = true;
        selector.wakeup();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            for (SelectionKey k : selector.keys()) {
                closeQuietly(k.channel());
            }
            selector.close();
        } catch (IOException | ClosedSelectorException ignored) {
            // Best effort: the channels are being discarded.
        }
        closeQuietly(server);
    }
}
