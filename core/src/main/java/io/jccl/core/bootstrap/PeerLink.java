package io.jccl.core.bootstrap;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * An authenticated connection this rank opened to another rank's (or the root's) bootstrap
 * listener. Frames go out on it; only the root answers on the same connection.
 */
final class PeerLink implements Closeable {
    final int peer;
    private final Socket socket;
    private final DataOutputStream out;

    private PeerLink(int peer, Socket socket) throws IOException {
        this.peer = peer;
        this.socket = socket;
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), 8192));
    }

    /**
     * Connects and authenticates.
     *
     * @param timeoutMs bound on the connect and on each handshake read
     */
    static PeerLink open(InetSocketAddress address, byte[] secret, int role, int myRank, int peer, int timeoutMs)
            throws IOException {
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(address, Math.max(1, timeoutMs));
            s.setSoTimeout(Math.max(1, timeoutMs));
            SecretHandshake.client(s, secret, role, myRank);
            return new PeerLink(peer, s);
        } catch (IOException | RuntimeException e) {
            BootstrapServer.closeQuietly(s);
            throw e;
        }
    }

    /** Writes one frame. Threads may share a link: frames never interleave. */
    synchronized void send(int src, int tag, byte[] payload) throws IOException {
        out.writeInt(payload.length);
        out.writeInt(src);
        out.writeInt(tag);
        out.write(payload);
        out.flush();
    }

    /** A frame read back from the root. */
    record Reply(int tag, byte[] payload) {
    }

    /** Reads one frame back (only the root answers on a link). */
    Reply receive(int timeoutMs) throws IOException {
        socket.setSoTimeout(Math.max(1, timeoutMs));
        DataInputStream in = new DataInputStream(socket.getInputStream());
        int length = in.readInt();
        in.readInt();
        int tag = in.readInt();
        if (length < 0 || length > BootstrapServer.MAX_PAYLOAD) {
            throw new IOException("malformed reply from the bootstrap root (" + length + " bytes)");
        }
        byte[] payload = new byte[length];
        in.readFully(payload);
        return new Reply(tag, payload);
    }

    @Override
    public void close() {
        BootstrapServer.closeQuietly(socket);
    }
}
