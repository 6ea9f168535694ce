package io.jccl.core.bootstrap;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/** Tags and encodings of bootstrap frames. */
final class Wire {
    private Wire() {
    }

    /** Rank to root: {@code nranks(4) address}. */
    static final int HELLO = 1;
    /** Root to rank: the ring successor's {@code address}. */
    static final int NEXT = 2;
    /** Root to rank: why init failed, UTF-8. */
    static final int ROOT_ERROR = 3;
    /** Ring all-gather step. */
    static final int ALLGATHER = 10;
    /** Liveness, between ring neighbours. */
    static final int HEARTBEAT = 20;
    /** The sender closed its communicator on purpose: its end of stream is no failure. */
    static final int GOODBYE = 21;
    /** The communicator failed: {@code failedRank(4) reason(UTF)}. */
    static final int ABORT = 22;
    /** Asks a peer how many operations it has issued (for a timeout's diagnosis). */
    static final int STATUS_QUERY = 30;
    /** The answer: {@code issued(8)}. */
    static final int STATUS_REPLY = 31;
    /**
     * Recovery after a failure (shrinking the communicator): delivered and sent even once the
     * communicator has failed, which stops every other tag.
     */
    static final int RECOVERY = 40;
    /** Tags from here up belong to the engine ({@link Bootstrap#send}). */
    static final int FIRST_USER_TAG = 1000;

    static byte[] address(InetSocketAddress a) {
        byte[] ip = a.getAddress().getAddress();
        return ByteBuffer.allocate(1 + ip.length + 2).put((byte) ip.length).put(ip).putShort((short) a.getPort()).array();
    }

    static InetSocketAddress address(ByteBuffer b) throws IOException {
        int len = b.get();
        if (len != 4 && len != 16) {
            throw new IOException("malformed address in a bootstrap frame");
        }
        byte[] ip = new byte[len];
        b.get(ip);
        return new InetSocketAddress(InetAddress.getByAddress(ip), Short.toUnsignedInt(b.getShort()));
    }

    static byte[] abort(int failedRank, String reason) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(failedRank);
            out.writeUTF(reason.length() > 4000 ? reason.substring(0, 4000) : reason);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    record Abort(int failedRank, String reason) {
        static Abort decode(byte[] payload) throws IOException {
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(payload));
            return new Abort(in.readInt(), in.readUTF());
        }
    }
}
