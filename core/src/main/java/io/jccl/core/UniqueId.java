package io.jccl.core;

import io.jccl.core.bootstrap.BootstrapInterfaces;
import io.jccl.core.bootstrap.BootstrapRoot;
import io.jccl.core.bootstrap.SecretHandshake;
import io.jccl.spi.NetResult;
import io.jccl.spi.log.DebugLogger;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * NCCL's {@code ncclUniqueId}: 128 bytes that one rank creates and passes to every other out of
 * band (a file, a launcher, an existing MPI job). It carries the bootstrap root's address and a
 * random secret that every bootstrap connection of the communicator must prove it knows.
 *
 * <pre>
 * magic "JCID"(4) version(1) addressLength(1) port(2) address(16) secret(32) zeros(72)
 * </pre>
 *
 * <p>Treat it as a credential: whoever has it can join the communicator.
 */
public final class UniqueId {
    /** {@code NCCL_UNIQUE_ID_BYTES}. */
    public static final int SIZE = 128;
    static final int SECRET_BYTES = 32;
    private static final int MAGIC = 0x4A434944;
    private static final byte VERSION = 1;

    private final InetSocketAddress root;
    private final byte[] secret;

    UniqueId(InetSocketAddress root, byte[] secret) {
        this.root = Objects.requireNonNull(root, "root");
        if (secret.length != SECRET_BYTES) {
            throw new IllegalArgumentException("a secret has " + SECRET_BYTES + " bytes");
        }
        this.secret = secret.clone();
    }

    /**
     * Creates an id and starts its bootstrap root in this JVM, on the interface the bootstrap uses
     * ({@code NCCL_SOCKET_IFNAME}). The root serves one communicator's init, waiting at most
     * {@code JCCL_TIMEOUT_MS} for every rank, then exits.
     *
     * @throws JcclException {@link NetResult#SYSTEM_ERROR} if no interface qualifies or it cannot listen
     */
    public static UniqueId create() {
        return create(CommConfig.fromEnvironment().timeout());
    }

    /**
     * Like {@link #create()}, with the root waiting at most {@code timeout} for every rank.
     */
    public static UniqueId create(Duration timeout) {
        byte[] secret = SecretHandshake.randomBytes(SECRET_BYTES);
        try {
            InetAddress local = BootstrapInterfaces.localAddress();
            InetSocketAddress bound = BootstrapRoot.start(new InetSocketAddress(local, 0), secret, timeout,
                    DebugLogger.fromEnvironment());
            return new UniqueId(bound, secret);
        } catch (IOException | IllegalStateException | IllegalArgumentException e) {
            throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK,
                    "cannot start the bootstrap root: " + e.getMessage(), e);
        }
    }

    /**
     * An id for a root at a known address ({@code NCCL_COMM_ID}, {@code MASTER_ADDR}), whose
     * secret all ranks derive from the same text. Rank 0 starts that root
     * ({@link Communicator#initFromEnvironment()} does).
     *
     * @param root       the root's address
     * @param secretText a secret all ranks share ({@code JCCL_COMM_SECRET}), or {@code null} to
     *                   derive one from the address, which only keeps out stray connections
     */
    public static UniqueId at(InetSocketAddress root, String secretText) {
        String basis = secretText != null ? "jccl-secret:" + secretText : "jccl-address:" + root;
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(basis.getBytes(StandardCharsets.UTF_8));
            return new UniqueId(root, digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JDK", e);
        }
    }

    /**
     * @param bytes the {@link #SIZE} bytes of {@link #toBytes()}
     * @throws JcclException {@link NetResult#INVALID_ARGUMENT} if they are not a JCCL unique id
     */
    public static UniqueId fromBytes(byte[] bytes) {
        if (bytes == null || bytes.length != SIZE) {
            throw JcclException.invalidArgument("a unique id has " + SIZE + " bytes, got "
                    + (bytes == null ? "null" : bytes.length));
        }
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (b.getInt() != MAGIC || b.get() != VERSION) {
            throw JcclException.invalidArgument("not a JCCL unique id (wrong magic or version)");
        }
        int len = b.get();
        int port = Short.toUnsignedInt(b.getShort());
        if (len != 4 && len != 16) {
            throw JcclException.invalidArgument("malformed unique id: address length " + len);
        }
        byte[] address = new byte[16];
        b.get(address);
        byte[] secret = new byte[SECRET_BYTES];
        b.get(secret);
        try {
            return new UniqueId(new InetSocketAddress(InetAddress.getByAddress(Arrays.copyOf(address, len)), port), secret);
        } catch (UnknownHostException e) {
            throw JcclException.invalidArgument("malformed unique id: " + e.getMessage());
        }
    }

    /**
     * @param hex the text of {@link #toString()}
     * @throws JcclException {@link NetResult#INVALID_ARGUMENT} if it is not one
     */
    public static UniqueId parse(String hex) {
        try {
            return fromBytes(HexFormat.of().parseHex(hex.trim()));
        } catch (IllegalArgumentException e) {
            throw JcclException.invalidArgument("not a unique id in hex: " + e.getMessage());
        }
    }

    /** @return the {@link #SIZE} bytes to pass to the other ranks */
    public byte[] toBytes() {
        byte[] ip = root.getAddress().getAddress();
        ByteBuffer b = ByteBuffer.allocate(SIZE).putInt(MAGIC).put(VERSION).put((byte) ip.length)
                .putShort((short) root.getPort());
        b.put(Arrays.copyOf(ip, 16)).put(secret);
        return b.array();
    }

    /** @return the bootstrap root's address */
    public InetSocketAddress rootAddress() {
        return root;
    }

    byte[] secret() {
        return secret.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof UniqueId u && Arrays.equals(toBytes(), u.toBytes());
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(toBytes());
    }

    /** @return the id in hex, {@link #parse}-able; it includes the secret */
    @Override
    public String toString() {
        return HexFormat.of().formatHex(toBytes());
    }
}
