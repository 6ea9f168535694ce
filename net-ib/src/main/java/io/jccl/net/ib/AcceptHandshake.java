package io.jccl.net.ib;

import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * The receiver's side of one incoming connection, one non-blocking step per {@code accept} call:
 * read and check HELLO (magic, version, the handle's secret) &rarr; create the queue pairs,
 * connect them (RTS), register the completion records, send REPLY &rarr; read READY &rarr; the
 * receive comm.
 *
 * <p>Anything wrong before READY (garbage, a wrong secret, silence for longer than
 * {@code JCCL_IB_PEER_TIMEOUT_MS} before HELLO, the peer hanging up) throws
 * {@link Dropped}: the listener closes this connection and goes on with the others.
 */
final class AcceptHandshake {
    /** This connection is dropped; the listener is unaffected. */
    static final class Dropped extends Exception {
        private static final long serialVersionUID = 1L;

        Dropped(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private enum Stage { READ_HELLO, SEND_REPLY, READ_READY }

    private final IbDevice device;
    private final IbConfig config;
    private final NetLogger logger;
    private final byte[] secret;
    private final SocketChannel channel;
    private final PeerWatch peerWatch;
    private final long started = System.nanoTime();
    private final String peer;
    private Stage stage = Stage.READ_HELLO;
    private ByteBuffer in = ByteBuffer.allocate(ConnectionInfo.HEADER);
    private ByteBuffer out;
    private IbRecvComm comm;

    AcceptHandshake(IbDevice device, IbConfig config, NetLogger logger, byte[] secret, SocketChannel channel,
            PeerWatch peerWatch) throws IOException {
        this.peerWatch = peerWatch;
        this.device = device;
        this.config = config;
        this.logger = logger;
        this.secret = secret;
        this.channel = channel;
        this.peer = String.valueOf(channel.getRemoteAddress());
        SideChannel.configure(channel, config.peerTimeoutMs());
    }

    /**
     * @return the receive comm once the peer confirmed, else {@code null}
     * @throws Dropped if this connection is garbage, forged, silent or gone
     * @throws NetException if the device refuses to create the comm
     */
    IbRecvComm step() throws Dropped, NetException {
        try {
            switch (stage) {
                case READ_HELLO -> {
                    boolean full = SideChannel.fill(channel, in);
                    if (in.position() >= 4 && in.duplicate().order(ByteOrder.BIG_ENDIAN).getInt(0) != ConnectionInfo.MAGIC) {
                        throw new IllegalArgumentException("bad magic (not a JcclIB peer)");
                    }
                    if (!full) {
                        long waited = (System.nanoTime() - started) / 1_000_000;
                        if (waited > config.peerTimeoutMs()) {
                            throw new IllegalArgumentException("no HELLO within " + waited + " ms");
                        }
                        return null;
                    }
                    if (in.capacity() == ConnectionInfo.HEADER) {
                        int nqps = ConnectionInfo.checkHeader(in, ConnectionInfo.HELLO, secret);
                        in = SideChannel.grow(in, nqps);
                        return step();
                    }
                    ConnectionInfo hello = ConnectionInfo.decode(in);
                    comm = IbRecvComm.create(device, config, logger, hello);
                    out = comm.reply(secret).encode();
                    stage = Stage.SEND_REPLY;
                    return step();
                }
                case SEND_REPLY -> {
                    if (!SideChannel.drain(channel, out)) {
                        return null;
                    }
                    in = ByteBuffer.allocate(ConnectionInfo.READY_SIZE);
                    stage = Stage.READ_READY;
                    return step();
                }
                case READ_READY -> {
                    if (!SideChannel.fill(channel, in)) {
                        return null;
                    }
                    ConnectionInfo.checkReady(in);
                    comm.attachSideChannel(channel, peerWatch);
                    IbRecvComm done = comm;
                    comm = null;
                    return done;
                }
                default -> throw new IllegalStateException(stage.toString());
            }
        } catch (IOException | IllegalArgumentException e) {
            abort();
            throw new Dropped("JcclIB: dropped the connection from " + peer + " in " + stage + ": " + e.getMessage(), e);
        } catch (NetException | RuntimeException e) {
            abort();
            throw e;
        }
    }

    void abort() {
        if (comm != null) {
            try {
                comm.close();
            } catch (NetException ignored) {
                // releasing after a failure
            }
            comm = null;
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
