package io.jccl.net.ib;

import io.jccl.spi.config.Env;
import io.jccl.spi.config.EnvVar;

import java.util.Locale;

/**
 * Every variable JcclIB reads, and their parsed values. NCCL's names where NCCL's IB transport has
 * the same setting (with NCCL's defaults), {@code JCCL_IB_*} for JCCL's own.
 *
 * @param hca              the {@code NCCL_IB_HCA} filter
 * @param gidIndex         {@code NCCL_IB_GID_INDEX}, -1 = choose
 * @param addressFamily    {@code NCCL_IB_ADDR_FAMILY}: 4 or 6
 * @param addressRange     {@code NCCL_IB_ADDR_RANGE}, or {@code null}
 * @param roceVersion      {@code NCCL_IB_ROCE_VERSION_NUM}: 1 or 2
 * @param timeout          {@code NCCL_IB_TIMEOUT}: the QP's local ACK timeout exponent
 * @param retryCount       {@code NCCL_IB_RETRY_CNT}
 * @param qpsPerConnection {@code NCCL_IB_QPS_PER_CONNECTION}
 * @param splitDataOnQps   {@code NCCL_IB_SPLIT_DATA_ON_QPS}
 * @param serviceLevel     {@code NCCL_IB_SL}
 * @param trafficClass     {@code NCCL_IB_TC}
 * @param pkeyIndex        {@code NCCL_IB_PKEY}
 * @param gdrFlushDisable  {@code NCCL_GDR_FLUSH_DISABLE}
 * @param peerTimeoutMs    {@code JCCL_IB_PEER_TIMEOUT_MS}
 * @param oobAddress       {@code JCCL_IB_OOB_ADDR}, or {@code null}
 * @param flushHostMemory  {@code JCCL_IB_FLUSH_HOST_MEMORY}
 */
public record IbConfig(
        HcaFilter hca,
        int gidIndex,
        int addressFamily,
        AddressRange addressRange,
        int roceVersion,
        int timeout,
        int retryCount,
        int qpsPerConnection,
        boolean splitDataOnQps,
        int serviceLevel,
        int trafficClass,
        int pkeyIndex,
        boolean gdrFlushDisable,
        int peerTimeoutMs,
        String oobAddress,
        boolean flushHostMemory) {

    @EnvVar(defaultValue = "",
            description = "Which HCAs and ports JcclIB uses, in NCCL's syntax: a comma list of name[:port] "
                    + "(mlx5_0:1,mlx5_1); a name matches by prefix unless the list starts with =; ^ first excludes "
                    + "the listed ones instead.")
    public static final String NCCL_IB_HCA = "NCCL_IB_HCA";

    @EnvVar(defaultValue = "-1",
            description = "GID index of the port to use; -1 chooses one: on RoCE the first routable GID of "
                    + "NCCL_IB_ADDR_FAMILY and NCCL_IB_ROCE_VERSION_NUM (inside NCCL_IB_ADDR_RANGE if set), on "
                    + "InfiniBand index 0.")
    public static final String NCCL_IB_GID_INDEX = "NCCL_IB_GID_INDEX";

    @EnvVar(defaultValue = "AF_INET",
            description = "Address family of the RoCE GID chosen when NCCL_IB_GID_INDEX is -1: AF_INET "
                    + "(IPv4-mapped) or AF_INET6.")
    public static final String NCCL_IB_ADDR_FAMILY = "NCCL_IB_ADDR_FAMILY";

    @EnvVar(defaultValue = "",
            description = "CIDR range (10.0.0.0/8, fd00::/8) the chosen RoCE GID must lie in; unset: any.")
    public static final String NCCL_IB_ADDR_RANGE = "NCCL_IB_ADDR_RANGE";

    @EnvVar(defaultValue = "2",
            description = "RoCE version (1 or 2) of the GID chosen when NCCL_IB_GID_INDEX is -1.")
    public static final String NCCL_IB_ROCE_VERSION_NUM = "NCCL_IB_ROCE_VERSION_NUM";

    @EnvVar(defaultValue = "20",
            description = "InfiniBand local ACK timeout of the queue pairs, 4.096 us * 2^value (20 is about 4 s "
                    + "per retry); 1 to 31.")
    public static final String NCCL_IB_TIMEOUT = "NCCL_IB_TIMEOUT";

    @EnvVar(defaultValue = "7",
            description = "Retransmissions of a queue pair before its work fails (0 to 7).")
    public static final String NCCL_IB_RETRY_CNT = "NCCL_IB_RETRY_CNT";

    @EnvVar(defaultValue = "1",
            description = "Queue pairs per connection (1 to 128); requests take them round robin.")
    public static final String NCCL_IB_QPS_PER_CONNECTION = "NCCL_IB_QPS_PER_CONNECTION";

    @EnvVar(defaultValue = "0",
            description = "1 splits every message over all the queue pairs of its connection, in 128-byte "
                    + "aligned parts; 0 sends each message on one queue pair.")
    public static final String NCCL_IB_SPLIT_DATA_ON_QPS = "NCCL_IB_SPLIT_DATA_ON_QPS";

    @EnvVar(defaultValue = "0", description = "InfiniBand service level of the queue pairs (0 to 15).")
    public static final String NCCL_IB_SL = "NCCL_IB_SL";

    @EnvVar(defaultValue = "0", description = "Traffic class of the queue pairs' GRH (RoCE DSCP << 2), 0 to 255.")
    public static final String NCCL_IB_TC = "NCCL_IB_TC";

    @EnvVar(defaultValue = "0", description = "P_Key index of the queue pairs.")
    public static final String NCCL_IB_PKEY = "NCCL_IB_PKEY";

    @EnvVar(defaultValue = "0",
            description = "1 disables the flush (a 1-byte RDMA read on a loopback queue pair) after receives "
                    + "into device memory.")
    public static final String NCCL_GDR_FLUSH_DISABLE = "NCCL_GDR_FLUSH_DISABLE";

    @EnvVar(defaultValue = "5000",
            description = "A dead peer fails every pending request within this many milliseconds: the bound on a "
                    + "send's RDMA completion (plus its bytes at port speed) and on the side channel's handshake; "
                    + "a peer process that exits is seen at once.")
    public static final String JCCL_IB_PEER_TIMEOUT_MS = "JCCL_IB_PEER_TIMEOUT_MS";

    @EnvVar(defaultValue = "",
            description = "Local IP address of the TCP side channel that exchanges queue-pair details; unset: the "
                    + "address of the RoCE GID in use, else the first non-loopback address of the host.")
    public static final String JCCL_IB_OOB_ADDR = "JCCL_IB_OOB_ADDR";

    @EnvVar(defaultValue = "0",
            description = "1 flushes receives into host memory too, with the same loopback RDMA read as device "
                    + "memory (a check of that path; host memory needs no flush).")
    public static final String JCCL_IB_FLUSH_HOST_MEMORY = "JCCL_IB_FLUSH_HOST_MEMORY";

    /**
     * Reads every variable.
     *
     * @throws IllegalArgumentException naming the variable, for a malformed or out-of-range value
     */
    public static IbConfig fromEnvironment() {
        String family = Env.get(NCCL_IB_ADDR_FAMILY, "AF_INET").toUpperCase(Locale.ROOT);
        int af = switch (family) {
            case "AF_INET" -> 4;
            case "AF_INET6" -> 6;
            default -> throw new IllegalArgumentException(NCCL_IB_ADDR_FAMILY + "=" + family
                    + " is not AF_INET or AF_INET6");
        };
        String range = Env.get(NCCL_IB_ADDR_RANGE);
        return new IbConfig(
                HcaFilter.parse(Env.get(NCCL_IB_HCA)),
                range(NCCL_IB_GID_INDEX, Env.getInt(NCCL_IB_GID_INDEX, -1), -1, 65535),
                af,
                range == null ? null : AddressRange.parse(NCCL_IB_ADDR_RANGE, range),
                range(NCCL_IB_ROCE_VERSION_NUM, Env.getInt(NCCL_IB_ROCE_VERSION_NUM, 2), 1, 2),
                range(NCCL_IB_TIMEOUT, Env.getInt(NCCL_IB_TIMEOUT, 20), 1, 31),
                range(NCCL_IB_RETRY_CNT, Env.getInt(NCCL_IB_RETRY_CNT, 7), 0, 7),
                range(NCCL_IB_QPS_PER_CONNECTION, Env.getInt(NCCL_IB_QPS_PER_CONNECTION, 1), 1, 128),
                Env.getBoolean(NCCL_IB_SPLIT_DATA_ON_QPS, false),
                range(NCCL_IB_SL, Env.getInt(NCCL_IB_SL, 0), 0, 15),
                range(NCCL_IB_TC, Env.getInt(NCCL_IB_TC, 0), 0, 255),
                range(NCCL_IB_PKEY, Env.getInt(NCCL_IB_PKEY, 0), 0, 65535),
                Env.getBoolean(NCCL_GDR_FLUSH_DISABLE, false),
                range(JCCL_IB_PEER_TIMEOUT_MS, Env.getInt(JCCL_IB_PEER_TIMEOUT_MS, 5000), 1, Integer.MAX_VALUE),
                Env.get(JCCL_IB_OOB_ADDR),
                Env.getBoolean(JCCL_IB_FLUSH_HOST_MEMORY, false));
    }

    private static int range(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + "=" + value + " is out of range [" + min + ", " + max + "]");
        }
        return value;
    }

    /** @return the QP's local ACK timeout in nanoseconds: 4.096 us * 2^timeout */
    public long ackTimeoutNanos() {
        return 4096L << timeout;
    }
}
