package io.jccl.net.socket;

import io.jccl.spi.NetLogger;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One daemon thread per plugin that keeps every comm's liveness socket: it writes a one-byte
 * heartbeat on each every interval and records when the peer's last heartbeat arrived. Nothing
 * here depends on NCCL calling {@code test()}, and the data path makes no system call for it: a
 * comm only compares two timestamps ({@link SocketComm#progress}).
 *
 * <p>A peer is silent when no byte has come from it for longer than the bound, as of this thread's
 * latest completed pass ({@link #lastPassNanos}). Measuring against the pass rather than the clock
 * keeps a pause of this process (a GC, a descheduled thread) from looking like a silent peer: the
 * peer's heartbeats wait in the kernel's buffer until the pass after the pause has read them.
 * A frozen, killed or unreachable peer sends nothing, and its kernel's TCP acknowledgements do not
 * count.
 */
final class LivenessWatch implements AutoCloseable {
    /** The heartbeat byte. Its value only tells a heartbeat from stray bytes in a packet capture. */
    private static final byte BEAT = (byte) 0xB7;
    /** A sender waiting for a CTS frame the receiver holds back (see {@link SocketRecvComm#wantFromWatch}). */
    static final byte WANT = (byte) 0xC7;

    private final Selector selector;
    private final Thread thread;
    private final Queue<SocketComm> toWatch = new ConcurrentLinkedQueue<>();
    private final NetLogger logger;
    private final long intervalNanos;
    private final ByteBuffer inbound = ByteBuffer.allocateDirect(4096);
    private final ByteBuffer beat = ByteBuffer.allocateDirect(1);
    private volatile long lastPassNanos = System.nanoTime();
    private volatile boolean running = true;

    /**
     * @param intervalNanos how often a heartbeat goes out on every comm
     */
    LivenessWatch(NetLogger logger, long intervalNanos) throws IOException {
        this.logger = logger;
        this.intervalNanos = intervalNanos;
        this.selector = Selector.open();
        beat.put(0, BEAT);
        this.thread = Thread.ofPlatform().daemon().name("JcclSocket liveness").start(this::run);
    }

    /** Starts keeping {@code comm}'s liveness socket. Any thread. */
    void watch(SocketComm comm) {
        toWatch.add(comm);
        selector.wakeup();
    }

    /**
     * @return when the latest completed pass began: every heartbeat that had arrived by then has
     *         been recorded
     */
    long lastPassNanos() {
        return lastPassNanos;
    }

    private void run() {
        long nextBeat = System.nanoTime();
        try {
            while (running) {
                long passStart = System.nanoTime();
                long wait = Math.max(1, (nextBeat - passStart) / 1_000_000);
                selector.select(wait);
                for (SocketComm c; (c = toWatch.poll()) != null; ) {
                    try {
                        c.liveness.register(selector, SelectionKey.OP_READ, c);
                    } catch (CancelledKeyException e) {
                        toWatch.add(c); // a key of a closed comm is flushed by the next select
                        break;
                    } catch (ClosedChannelException e) {
                        c.livenessEnded("was closed");
                    }
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    read(key);
                }
                selector.selectedKeys().clear();
                long now = System.nanoTime();
                if (now - nextBeat >= 0) {
                    for (SelectionKey key : selector.keys()) {
                        send(key);
                    }
                    nextBeat = now + intervalNanos;
                }
                lastPassNanos = passStart;
            }
        } catch (IOException | RuntimeException e) {
            if (running) {
                logger.warn("NET/JcclSocket: the liveness thread stopped, so silent peers are no longer detected: %s", e);
            }
        }
    }

    private void read(SelectionKey key) {
        SocketComm c = (SocketComm) key.attachment();
        try {
            int total = 0;
            int n;
            boolean want = false;
            while ((n = ((SocketChannel) key.channel()).read(inbound.clear())) > 0) {
                total += n;
                for (int i = 0; i < n && !want; i++) {
                    want = inbound.get(i) == WANT;
                }
            }
            if (total > 0) {
                c.heard(System.nanoTime());
            }
            if (want && c instanceof SocketRecvComm r) {
                r.wantFromWatch();
            }
            if (n < 0) {
                key.cancel();
                c.livenessEnded("closed its end");
            }
        } catch (IOException | CancelledKeyException e) {
            key.cancel();
            if (!c.isClosed()) {
                c.livenessEnded("failed: " + e.getMessage());
            }
        }
    }

    private void send(SelectionKey key) {
        if (!key.isValid()) {
            return;
        }
        SocketComm c = (SocketComm) key.attachment();
        try {
            // A full buffer (a peer frozen for very long) takes nothing: its silence decides, not this write.
            ((SocketChannel) key.channel()).write(beat.clear());
        } catch (IOException e) {
            key.cancel();
            if (!c.isClosed()) {
                c.livenessEnded("failed: " + e.getMessage());
            }
        }
    }

    @Override
    public void close() {
        running = false;
        selector.wakeup();
        try {
            thread.join(2000);
            selector.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
