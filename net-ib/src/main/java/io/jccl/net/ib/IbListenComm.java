package io.jccl.net.ib;

import io.jccl.spi.ListenComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetResult;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * A listening side channel and the connections it is setting up. Every {@code accept} takes new
 * TCP connections, advances each handshake one non-blocking step, and returns the first that is
 * complete. Connections that turn out to be garbage are dropped and logged; the others go on.
 */
final class IbListenComm implements ListenComm {
    private static final SecureRandom RANDOM = new SecureRandom();

    final IbDevice device;
    private final IbConfig config;
    private final NetLogger logger;
    private final ServerSocketChannel server;
    private final PeerWatch peerWatch;
    private final byte[] secret = new byte[IbHandle.SECRET_SIZE];
    private final List<AcceptHandshake> pending = new ArrayList<>();
    private boolean closed;

    IbListenComm(IbDevice device, IbConfig config, NetLogger logger, PeerWatch peerWatch) throws NetException {
        this.peerWatch = peerWatch;
        this.device = device;
        this.config = config;
        this.logger = logger;
        RANDOM.nextBytes(secret);
        try {
            server = ServerSocketChannel.open();
            server.configureBlocking(false);
            server.bind(new InetSocketAddress(device.oobAddress(), 0), 256);
        } catch (IOException e) {
            throw new NetException(NetResult.SYSTEM_ERROR, "JcclIB: cannot listen on " + device.oobAddress() + " ("
                    + IbConfig.JCCL_IB_OOB_ADDR + "): " + e.getMessage(), e);
        }
    }

    /** @return the bound address */
    InetSocketAddress address() throws NetException {
        try {
            return (InetSocketAddress) server.getLocalAddress();
        } catch (IOException e) {
            throw NetException.systemError("JcclIB: listener address: " + e.getMessage(), e);
        }
    }

    byte[] secret() {
        return secret.clone();
    }

    synchronized IbRecvComm accept() throws NetException {
        if (closed) {
            throw NetException.internalError("accept on a closed JcclIB listen comm");
        }
        try {
            SocketChannel ch;
            while ((ch = server.accept()) != null) {
                try {
                    pending.add(new AcceptHandshake(device, config, logger, secret, ch, peerWatch));
                } catch (IOException e) {
                    ch.close();
                    logger.warn("NET/JcclIB : dropped a connection to the listener: %s", e.getMessage());
                }
            }
        } catch (IOException e) {
            throw NetException.systemError("JcclIB: the listener on " + device.oobAddress() + " failed: "
                    + e.getMessage(), e);
        }
        for (Iterator<AcceptHandshake> it = pending.iterator(); it.hasNext(); ) {
            AcceptHandshake h = it.next();
            try {
                IbRecvComm comm = h.step();
                if (comm != null) {
                    it.remove();
                    return comm;
                }
            } catch (AcceptHandshake.Dropped e) {
                it.remove();
                logger.warn("NET/JcclIB : %s", e.getMessage());
            } catch (NetException | RuntimeException e) {
                it.remove();
                throw e;
            }
        }
        return null;
    }

    synchronized void close() {
        closed = true;
        for (AcceptHandshake h : pending) {
            h.abort();
        }
        pending.clear();
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
