package io.jccl.net.ib;

import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetResult;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The sender's side of connection set-up, one non-blocking step per {@code connect} call (NCCL's
 * {@code ncclIbConnect} stages): create the queue pairs (INIT) and the FIFO, start the TCP connect
 * &rarr; once connected, send HELLO &rarr; read the receiver's REPLY, move the queue pairs to RTR
 * and RTS &rarr; send READY &rarr; the send comm.
 *
 * <p>The queue pairs come first so that HELLO follows the TCP connection at once: the listener
 * drops a connection that stays silent for {@code JCCL_IB_PEER_TIMEOUT_MS}, and creating verbs
 * objects can take a while (first calls, a slow machine).
 */
final class ConnectHandshake {
    private enum Stage { CONNECTING, SEND_HELLO, READ_REPLY, SEND_READY }

    private final IbConfig config;
    private final PeerWatch peerWatch;
    private final InetSocketAddress target;
    private final byte[] secret;
    private final SocketChannel channel;
    private Stage stage = Stage.CONNECTING;
    private IbSendComm comm;
    private ByteBuffer out;
    private ByteBuffer in;

    ConnectHandshake(IbDevice device, IbConfig config, NetLogger logger, IbHandle.Target target, PeerWatch peerWatch)
            throws NetException {
        this.config = config;
        this.peerWatch = peerWatch;
        this.target = target.address();
        this.secret = target.secret();
        this.comm = IbSendComm.create(device, config, logger);
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open();
            ch.configureBlocking(false);
            ch.connect(this.target);
        } catch (IOException e) {
            abort(ch);
            throw new NetException(NetResult.SYSTEM_ERROR, "JcclIB: cannot connect to the listener at " + this.target
                    + ": " + e.getMessage(), e);
        }
        this.channel = ch;
    }

    /**
     * Advances as far as possible without blocking.
     *
     * @return the send comm once connected, else {@code null}
     * @throws NetException if the connection fails; everything is released
     */
    IbSendComm step() throws NetException {
        try {
            switch (stage) {
                case CONNECTING -> {
                    if (!channel.finishConnect()) {
                        return null;
                    }
                    SideChannel.configure(channel, config.peerTimeoutMs());
                    out = comm.hello(secret).encode();
                    stage = Stage.SEND_HELLO;
                    return step();
                }
                case SEND_HELLO -> {
                    if (!SideChannel.drain(channel, out)) {
                        return null;
                    }
                    in = ByteBuffer.allocate(ConnectionInfo.HEADER);
                    stage = Stage.READ_REPLY;
                    return step();
                }
                case READ_REPLY -> {
                    if (!SideChannel.fill(channel, in)) {
                        return null;
                    }
                    if (in.capacity() == ConnectionInfo.HEADER) {
                        int nqps = ConnectionInfo.checkHeader(in, ConnectionInfo.REPLY, secret);
                        in = SideChannel.grow(in, nqps);
                        return step();
                    }
                    ConnectionInfo reply = ConnectionInfo.decode(in);
                    comm.connect(reply);
                    out = ConnectionInfo.ready();
                    stage = Stage.SEND_READY;
                    return step();
                }
                case SEND_READY -> {
                    if (!SideChannel.drain(channel, out)) {
                        return null;
                    }
                    comm.attachSideChannel(channel, peerWatch);
                    IbSendComm done = comm;
                    comm = null;
                    return done;
                }
                default -> throw new IllegalStateException(stage.toString());
            }
        } catch (IOException e) {
            abort();
            throw new NetException(stage == Stage.CONNECTING ? NetResult.SYSTEM_ERROR : NetResult.REMOTE_ERROR,
                    "JcclIB: connecting to " + target + " failed (" + stage + "): " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            abort();
            throw NetException.remoteError("JcclIB: the listener at " + target + " answered with garbage: "
                    + e.getMessage());
        } catch (NetException | RuntimeException e) {
            abort();
            throw e;
        }
    }

    /** Releases what the handshake holds. */
    void abort() {
        abort(channel);
    }

    private void abort(SocketChannel ch) {
        if (comm != null) {
            try {
                comm.close();
            } catch (NetException ignored) {
                // releasing after a failure
            }
            comm = null;
        }
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
