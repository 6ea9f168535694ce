package io.jccl.net.ib;

import io.jccl.spi.NetLogger;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One thread per plugin that waits on every comm's side channel at once (a {@link Selector}), so
 * that the data path never makes a system call to learn that a peer has gone. When a side channel
 * becomes readable (a CLOSE or ABORT frame, the end of the stream, a reset, a keepalive failure),
 * the comm is flagged; its next {@code isend}, {@code irecv} or {@code test} reads the channel and
 * acts. A comm is watched again after a partial frame.
 */
final class PeerWatch implements AutoCloseable {
    private final Selector selector;
    private final Thread thread;
    private final Queue<IbComm> toWatch = new ConcurrentLinkedQueue<>();
    private final NetLogger logger;
    private volatile boolean running = true;

    PeerWatch(NetLogger logger) throws IOException {
        this.logger = logger;
        this.selector = Selector.open();
        this.thread = Thread.ofPlatform().daemon().name("JcclIB peer watch").start(this::run);
    }

    /** Starts (or resumes) watching {@code comm}'s side channel. Any thread. */
    void watch(IbComm comm) {
        toWatch.add(comm);
        selector.wakeup();
    }

    private void run() {
        try {
            while (running) {
                selector.select(1000);
                for (IbComm c; (c = toWatch.poll()) != null; ) {
                    try {
                        c.sideChannel().register(selector, SelectionKey.OP_READ, c);
                    } catch (java.nio.channels.CancelledKeyException e) {
                        toWatch.add(c); // its last key is flushed by the next select
                        break;
                    } catch (ClosedChannelException | IllegalArgumentException e) {
                        c.peerSignal(); // closed under us: let the comm find out
                    }
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    key.cancel(); // the comm reads it on its own thread and asks again if need be
                    ((IbComm) key.attachment()).peerSignal();
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException | RuntimeException e) {
            if (running) {
                logger.warn("NET/JcclIB : the peer watch thread stopped: %s", e);
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
