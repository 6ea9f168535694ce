package io.jccl.net.socket;

import io.jccl.spi.NetException;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A connection being made, one non-blocking step per {@code connect} call: open the control, data
 * and liveness sockets, finish each TCP connect, write each {@link Handshake}. A refused or unreachable
 * connect is retried as NCCL does ({@code NCCL_SOCKET_RETRY_CNT} times, waiting n x
 * {@code NCCL_SOCKET_RETRY_SLEEP_MSEC} before the n-th retry) without ever sleeping in the caller,
 * but never longer than {@code JCCL_SOCKET_CONNECT_TIMEOUT_MS} in all: a handle exists only once its
 * listener is bound, so a refusal that lasts means the listener is gone.
 */
final class PendingConnect {
    private enum Step { IDLE, CONNECTING, HANDSHAKING, DONE }

    private final SocketNetPlugin plugin;
    private final SocketConfig.Settings settings;
    private final SocketHandle.Contents target;
    private final long connectionId = ThreadLocalRandom.current().nextLong();
    private final SocketChannel[] sockets;
    private final ByteBuffer[] handshakes;
    private final Step[] steps;
    private final long[] connectStarted;
    private int retries;
    private long nextAttemptNanos;
    private final long giveUpNanos;

    PendingConnect(SocketNetPlugin plugin, SocketConfig.Settings settings, SocketHandle.Contents target) {
        this.plugin = plugin;
        this.settings = settings;
        this.target = target;
        int n = Handshake.sockets(target.streams());
        this.sockets = new SocketChannel[n];
        this.handshakes = new ByteBuffer[n];
        this.steps = new Step[n];
        this.connectStarted = new long[n];
        this.giveUpNanos = System.nanoTime() + settings.connectTimeout().toNanos();
        for (int i = 0; i < n; i++) {
            steps[i] = Step.IDLE;
            handshakes[i] = Handshake.encode(i, target.streams(), target.secret(), connectionId);
        }
    }

    /**
     * @return the comm once every socket is connected and has sent its handshake, else null
     * @throws NetException {@code ncclSystemError} once retries are exhausted or the network fails
     */
    SocketSendComm progress() throws NetException {
        long now = System.nanoTime();
        boolean done = true;
        for (int i = 0; i < sockets.length; i++) {
            try {
                step(i, now);
            } catch (ConnectException | NoRouteToHostException e) {
                retry(i, e, now);
            } catch (IOException e) {
                abandon();
                throw NetException.systemError("JcclSocket connect to " + describe() + " failed: " + e.getMessage(), e);
            }
            done &= steps[i] == Step.DONE;
        }
        if (!done) {
            return null;
        }
        SocketChannel[] data = new SocketChannel[target.streams()];
        System.arraycopy(sockets, 1, data, 0, data.length);
        SocketConfig.Settings agreed = settings.withLayout(target.threads(), target.streams(), target.minChunkBytes());
        SocketSendComm comm = new SocketSendComm(plugin, agreed, sockets[0], data,
                sockets[Handshake.livenessIndex(target.streams())], target.threads(), describe());
        comm.start();
        return comm;
    }

    private void step(int i, long now) throws IOException, NetException {
        switch (steps[i]) {
            case IDLE -> {
                if (now - nextAttemptNanos < 0) {
                    return;
                }
                SocketChannel c = SocketChannel.open();
                sockets[i] = c;
                c.configureBlocking(false);
                plugin.configure(c);
                connectStarted[i] = now;
                steps[i] = c.connect(target.address()) ? Step.HANDSHAKING : Step.CONNECTING;
                if (steps[i] == Step.HANDSHAKING) {
                    step(i, now);
                }
            }
            case CONNECTING -> {
                if (sockets[i].finishConnect()) {
                    steps[i] = Step.HANDSHAKING;
                    step(i, now);
                } else if (now - connectStarted[i] > settings.connectTimeout().toNanos()) {
                    throw new ConnectException("no answer within " + settings.connectTimeout().toMillis() + " ms");
                }
            }
            case HANDSHAKING -> {
                sockets[i].write(handshakes[i]);
                if (!handshakes[i].hasRemaining()) {
                    steps[i] = Step.DONE;
                }
            }
            case DONE -> {
            }
        }
    }

    private void retry(int i, IOException cause, long now) throws NetException {
        SocketListenComm.closeQuietly(sockets[i]);
        sockets[i] = null;
        steps[i] = Step.IDLE;
        handshakes[i].rewind();
        if (++retries > settings.retries() || now - giveUpNanos > 0) {
            abandon();
            throw NetException.systemError("JcclSocket could not connect to " + describe() + " after "
                    + (retries - 1) + " retries in " + (settings.connectTimeout().toMillis() - (giveUpNanos - now) / 1_000_000)
                    + " ms: " + cause.getMessage() + " (is the peer listening? NCCL_SOCKET_RETRY_CNT, "
                    + "NCCL_SOCKET_RETRY_SLEEP_MSEC, JCCL_SOCKET_CONNECT_TIMEOUT_MS)", cause);
        }
        nextAttemptNanos = now + retries * settings.retrySleepMs() * 1_000_000L;
    }

    /** Closes every socket opened so far. */
    void abandon() {
        for (SocketChannel c : sockets) {
            SocketListenComm.closeQuietly(c);
        }
    }

    private String describe() {
        return target.address().getAddress().getHostAddress() + ":" + target.address().getPort();
    }
}
