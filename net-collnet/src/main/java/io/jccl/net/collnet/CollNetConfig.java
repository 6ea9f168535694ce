package io.jccl.net.collnet;

import io.jccl.spi.config.Env;
import io.jccl.spi.config.EnvVar;

import java.net.InetSocketAddress;
import java.util.HexFormat;
import java.util.Locale;

/**
 * JcclCollNet's settings. The aggregator's chunk size and window hold for the whole group: it
 * tells every rank its values when the group forms.
 */
public final class CollNetConfig {
    private CollNetConfig() {
    }

    @EnvVar(defaultValue = "rank:0",
            description = "Where JcclCollNet's aggregation service (the switch) runs: rank:K, a thread of the group's "
                    + "rank K; HOST:PORT, a `jccl collnet-aggregator` process (JCCL_COLLNET_SECRET on both sides); off, "
                    + "no devices.")
    public static final String JCCL_COLLNET_AGGREGATOR = "JCCL_COLLNET_AGGREGATOR";

    @EnvVar(defaultValue = "",
            description = "32 hex digits: the key ranks present to a `jccl collnet-aggregator` process; the process "
                    + "makes and prints one when unset.")
    public static final String JCCL_COLLNET_SECRET = "JCCL_COLLNET_SECRET";

    @EnvVar(defaultValue = "512K",
            description = "Bytes of one JcclCollNet pipeline chunk; the aggregator's value holds for its groups.")
    public static final String JCCL_COLLNET_CHUNK_BYTES = "JCCL_COLLNET_CHUNK_BYTES";

    @EnvVar(defaultValue = "8",
            description = "JcclCollNet chunks a rank has in flight to the aggregator at once (the pipeline's depth); "
                    + "the aggregator's value holds.")
    public static final String JCCL_COLLNET_WINDOW = "JCCL_COLLNET_WINDOW";

    @EnvVar(defaultValue = "15000",
            description = "Milliseconds of heartbeat silence after which a JcclCollNet rank or aggregator is dead or "
                    + "frozen, and every pending request of its group fails; also the bound on connect.")
    public static final String JCCL_COLLNET_TIMEOUT_MS = "JCCL_COLLNET_TIMEOUT_MS";

    /** Where the aggregator runs: a rank of the group ({@code rank >= 0}) or a process at {@code address}. */
    record Placement(int rank, InetSocketAddress address, byte[] secret) {
        boolean inRank() {
            return address == null;
        }
    }

    /**
     * @param placement       where the aggregator runs; null for "off"
     * @param chunkBytes      pipeline chunk
     * @param window          chunks in flight per rank
     * @param timeoutMs       heartbeat silence that means death, and the bound on connect
     */
    record Settings(Placement placement, int chunkBytes, int window, long timeoutMs) {
        long heartbeatMs() {
            return Math.max(50, Math.min(1000, timeoutMs / 5));
        }
    }

    /**
     * @return the settings from the environment
     * @throws IllegalArgumentException naming the variable, for a malformed value
     */
    static Settings fromEnvironment() {
        long chunk = Env.getBytes(JCCL_COLLNET_CHUNK_BYTES, 512 << 10);
        if (chunk < 4096 || chunk > (64 << 20) || chunk % 64 != 0) {
            throw new IllegalArgumentException(JCCL_COLLNET_CHUNK_BYTES + "=" + chunk
                    + " must be a multiple of 64 between 4096 and 64M");
        }
        int window = Env.getInt(JCCL_COLLNET_WINDOW, 8);
        if (window < 1 || window > 64) {
            throw new IllegalArgumentException(JCCL_COLLNET_WINDOW + "=" + window + " is outside 1..64");
        }
        long timeout = Env.getLong(JCCL_COLLNET_TIMEOUT_MS, 15_000);
        if (timeout < 100) {
            throw new IllegalArgumentException(JCCL_COLLNET_TIMEOUT_MS + "=" + timeout + " is below 100");
        }
        return new Settings(placement(Env.get(JCCL_COLLNET_AGGREGATOR), Env.get(JCCL_COLLNET_SECRET)), (int) chunk,
                window, timeout);
    }

    static Placement placement(String value, String secretHex) {
        String v = value == null || value.isBlank() ? "rank:0" : value.trim();
        if (v.equalsIgnoreCase("off")) {
            return null;
        }
        if (v.toLowerCase(Locale.ROOT).startsWith("rank:")) {
            int k;
            try {
                k = Integer.parseInt(v.substring(5).trim());
            } catch (NumberFormatException e) {
                k = -1;
            }
            if (k < 0) {
                throw new IllegalArgumentException(JCCL_COLLNET_AGGREGATOR + "=" + value + ": rank:K needs a rank K >= 0");
            }
            return new Placement(k, null, null);
        }
        int colon = v.lastIndexOf(':');
        int port = -1;
        if (colon > 0) {
            try {
                port = Integer.parseInt(v.substring(colon + 1));
            } catch (NumberFormatException e) {
                port = -1;
            }
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException(JCCL_COLLNET_AGGREGATOR + "=" + value
                    + " is not rank:K, HOST:PORT or off");
        }
        String host = v.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new Placement(-1, new InetSocketAddress(host, port), secret(secretHex));
    }

    /**
     * @param hex 32 hex digits
     * @return the 16-byte key of an aggregator process
     * @throws IllegalArgumentException naming the variable if it is not 32 hex digits
     */
    public static byte[] parseSecret(String hex) {
        return secret(hex);
    }

    static byte[] secret(String hex) {
        if (hex == null || hex.isBlank()) {
            throw new IllegalArgumentException(JCCL_COLLNET_AGGREGATOR + " names an aggregator process: set "
                    + JCCL_COLLNET_SECRET + " to the key it printed");
        }
        try {
            byte[] key = HexFormat.of().parseHex(hex.trim());
            if (key.length == 16) {
                return key;
            }
        } catch (IllegalArgumentException e) {
            // Reported below.
        }
        throw new IllegalArgumentException(JCCL_COLLNET_SECRET + " must be 32 hex digits");
    }
}
