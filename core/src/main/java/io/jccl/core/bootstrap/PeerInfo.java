package io.jccl.core.bootstrap;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * What every rank learns about every other at init (NCCL's {@code ncclPeerInfo}, all-gathered
 * around the bootstrap ring).
 *
 * @param rank       the peer's rank
 * @param host       its host name
 * @param pid        its process id
 * @param bootstrap  its bootstrap listener
 * @param attributes the engine's own fields (transport, channel layout), opaque here
 */
public record PeerInfo(int rank, String host, long pid, InetSocketAddress bootstrap, byte[] attributes) {

    /** @return e.g. {@code rank 3 (node7 pid 4242)} */
    public String describe() {
        return "rank " + rank + " (" + host + " pid " + pid + ")";
    }

    byte[] encode() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(rank);
            out.writeUTF(host);
            out.writeLong(pid);
            byte[] a = Wire.address(bootstrap);
            out.writeInt(a.length);
            out.write(a);
            out.writeInt(attributes.length);
            out.write(attributes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static PeerInfo decode(byte[] payload) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload));
        int rank = in.readInt();
        String host = in.readUTF();
        long pid = in.readLong();
        byte[] a = new byte[in.readInt()];
        in.readFully(a);
        byte[] attributes = new byte[in.readInt()];
        in.readFully(attributes);
        return new PeerInfo(rank, host, pid, Wire.address(ByteBuffer.wrap(a)), attributes);
    }
}
