package io.jccl.core.bootstrap;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;

/**
 * The first bytes of every bootstrap connection: both ends prove they know the communicator's
 * secret without sending it.
 *
 * <pre>
 * client: MAGIC(8) clientNonce(16)
 * server: serverNonce(16) HMAC-SHA256(secret, "S" clientNonce serverNonce)(32)
 * client: HMAC-SHA256(secret, "C" clientNonce serverNonce)(32) role(4) rank(4)
 * </pre>
 *
 * A server drops a connection whose magic or proof is wrong; a client refuses a server whose proof
 * is wrong (a stale process on a reused port, or another job's root).
 */
public final class SecretHandshake {
    /** "JCCLBST1". */
    static final long MAGIC = 0x4A43434C42535431L;
    static final int NONCE_BYTES = 16;
    static final int MAC_BYTES = 32;
    static final int HELLO_BYTES = 8 + NONCE_BYTES;
    static final int CHALLENGE_BYTES = NONCE_BYTES + MAC_BYTES;
    static final int PROOF_BYTES = MAC_BYTES + 4 + 4;

    /** A rank connecting to the root to announce itself. */
    public static final int ROLE_ROOT_CLIENT = 1;
    /** A rank connecting to another rank's bootstrap listener. */
    public static final int ROLE_PEER = 2;

    private static final SecureRandom RANDOM = new SecureRandom();

    private SecretHandshake() {
    }

    /** Who authenticated on a server connection. */
    public record Identity(int role, int rank) {
    }

    /** @return {@code n} random bytes from a cryptographic generator */
    public static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    /**
     * Runs the client side on a connected socket whose read timeout bounds each read.
     *
     * @throws IOException on I/O failure, a timeout, or a server that does not know the secret
     */
    public static void client(Socket socket, byte[] secret, int role, int rank) throws IOException {
        byte[] clientNonce = randomBytes(NONCE_BYTES);
        ByteBuffer hello = ByteBuffer.allocate(HELLO_BYTES).putLong(MAGIC).put(clientNonce);
        OutputStream out = socket.getOutputStream();
        out.write(hello.array());
        out.flush();
        DataInputStream in = new DataInputStream(socket.getInputStream());
        byte[] challenge = new byte[CHALLENGE_BYTES];
        in.readFully(challenge);
        byte[] serverNonce = new byte[NONCE_BYTES];
        System.arraycopy(challenge, 0, serverNonce, 0, NONCE_BYTES);
        byte[] serverProof = new byte[MAC_BYTES];
        System.arraycopy(challenge, NONCE_BYTES, serverProof, 0, MAC_BYTES);
        if (!MessageDigest.isEqual(serverProof, mac(secret, (byte) 'S', clientNonce, serverNonce))) {
            throw new IOException("the bootstrap peer at " + socket.getRemoteSocketAddress()
                    + " does not know this communicator's secret (another job, or a stale process on that port?)");
        }
        ByteBuffer proof = ByteBuffer.allocate(PROOF_BYTES).put(mac(secret, (byte) 'C', clientNonce, serverNonce))
                .putInt(role).putInt(rank);
        out.write(proof.array());
        out.flush();
    }

    /**
     * The server side as a state machine over non-blocking reads: {@link #hello} when the client's
     * first bytes are in, then {@link #verify} with its proof.
     */
    public static final class Server {
        private final byte[] secret;
        private byte[] clientNonce;
        private byte[] serverNonce;

        /** @param secret the communicator's secret */
        public Server(byte[] secret) {
            this.secret = secret;
        }

        /**
         * @param hello the client's {@link #HELLO_BYTES} bytes
         * @return the challenge to send, or {@code null} if the magic is wrong (not a JCCL bootstrap client)
         */
        public byte[] hello(ByteBuffer hello) {
            if (hello.getLong() != MAGIC) {
                return null;
            }
            clientNonce = new byte[NONCE_BYTES];
            hello.get(clientNonce);
            serverNonce = randomBytes(NONCE_BYTES);
            return ByteBuffer.allocate(CHALLENGE_BYTES).put(serverNonce)
                    .put(mac(secret, (byte) 'S', clientNonce, serverNonce)).array();
        }

        /**
         * @param proof the client's {@link #PROOF_BYTES} bytes
         * @return who the client is, or {@code null} if its proof is wrong
         */
        public Identity verify(ByteBuffer proof) {
            byte[] mac = new byte[MAC_BYTES];
            proof.get(mac);
            int role = proof.getInt();
            int rank = proof.getInt();
            if (clientNonce == null || !MessageDigest.isEqual(mac, mac(secret, (byte) 'C', clientNonce, serverNonce))) {
                return null;
            }
            return new Identity(role, rank);
        }
    }

    static byte[] mac(byte[] secret, byte side, byte[] clientNonce, byte[] serverNonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(side);
            mac.update(clientNonce);
            mac.update(serverNonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JDK", e);
        }
    }
}
