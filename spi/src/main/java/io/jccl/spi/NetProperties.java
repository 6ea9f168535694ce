package io.jccl.spi;

import java.util.Objects;

/**
 * One device's properties: the fields of {@code ncclNetProperties_v6_t}, plus the few later
 * fields that the native shim must fill when it exports newer ABI versions.
 *
 * <p>Build one with {@link #builder(String)}; the defaults are those of NCCL's example plugin and
 * compat layer (spec sections 4.5 and 6).
 *
 * @param name        device name; logged, and used by NCCL as the topology key, so unique per device
 * @param pciPath     sysfs PCI path of the device ({@code realpath /sys/class/net/eth0/device}), or
 *                    {@code null} for a virtual device
 * @param guid        NIC identity; devices with equal guids are the same physical port
 * @param ptrSupport  OR of {@link PointerType#mask()}: which memory {@code regMr} accepts
 * @param speedMbps   port speed in Mbps (100000 = 100 Gb/s)
 * @param port        port number, with {@code guid} distinguishing multi-port NICs
 * @param latencyUs   network latency in microseconds; 0 lets NCCL use its default
 * @param maxComms    how many connections the device can create
 * @param maxRecvs    the largest {@code n} a grouped {@code irecv} accepts (1 if none)
 * @param regIsGlobal registrations are not tied to a comm (v8+; false is always safe)
 * @param forceFlush  NCCL must flush every GPU receive (v9+)
 * @param maxP2pBytes the largest single {@code isend}/{@code irecv} (v9+); NCCL splits larger ones
 * @param maxCollBytes the largest single CollNet operation (v9+)
 */
public record NetProperties(
        String name,
        String pciPath,
        long guid,
        int ptrSupport,
        int speedMbps,
        int port,
        float latencyUs,
        int maxComms,
        int maxRecvs,
        boolean regIsGlobal,
        boolean forceFlush,
        long maxP2pBytes,
        long maxCollBytes) {

    /** NCCL's {@code MAX_NET_SIZE}: the largest message NCCL assumes a v6 to v8 plugin takes (1 GiB). */
    public static final long DEFAULT_MAX_P2P_BYTES = 1L << 30;
    /** NCCL's {@code MAX_COLLNET_SIZE}: the largest CollNet operation assumed for v6 to v8 (512 MiB). */
    public static final long DEFAULT_MAX_COLL_BYTES = 512L << 20;

    public NetProperties {
        Objects.requireNonNull(name, "name");
    }

    /** @return whether {@link #ptrSupport()} includes {@code type} */
    public boolean supports(PointerType type) {
        return type.isIn(ptrSupport);
    }

    /** @return a builder with NCCL's defaults and this device name */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** @return a builder holding these properties, to change a few */
    public Builder toBuilder() {
        return new Builder(name).pciPath(pciPath).guid(guid).ptrSupport(ptrSupport).speedMbps(speedMbps)
                .port(port).latencyUs(latencyUs).maxComms(maxComms).maxRecvs(maxRecvs)
                .regIsGlobal(regIsGlobal).forceFlush(forceFlush).maxP2pBytes(maxP2pBytes)
                .maxCollBytes(maxCollBytes);
    }

    /** Builds {@link NetProperties}; every setter returns the builder. */
    public static final class Builder {
        private final String name;
        private String pciPath;
        private long guid;
        private int ptrSupport = PointerType.HOST.mask();
        private int speedMbps = 10_000;
        private int port;
        private float latencyUs;
        private int maxComms = 65_536;
        private int maxRecvs = 1;
        private boolean regIsGlobal;
        private boolean forceFlush;
        private long maxP2pBytes = DEFAULT_MAX_P2P_BYTES;
        private long maxCollBytes = DEFAULT_MAX_COLL_BYTES;

        private Builder(String name) {
            this.name = Objects.requireNonNull(name, "name");
        }

        public Builder pciPath(String v) { pciPath = v; return this; }
        public Builder guid(long v) { guid = v; return this; }
        public Builder ptrSupport(int v) { ptrSupport = v; return this; }
        public Builder speedMbps(int v) { speedMbps = v; return this; }
        public Builder port(int v) { port = v; return this; }
        public Builder latencyUs(float v) { latencyUs = v; return this; }
        public Builder maxComms(int v) { maxComms = v; return this; }
        public Builder maxRecvs(int v) { maxRecvs = v; return this; }
        public Builder regIsGlobal(boolean v) { regIsGlobal = v; return this; }
        public Builder forceFlush(boolean v) { forceFlush = v; return this; }
        public Builder maxP2pBytes(long v) { maxP2pBytes = v; return this; }
        public Builder maxCollBytes(long v) { maxCollBytes = v; return this; }

        /** @return the properties */
        public NetProperties build() {
            return new NetProperties(name, pciPath, guid, ptrSupport, speedMbps, port, latencyUs,
                    maxComms, maxRecvs, regIsGlobal, forceFlush, maxP2pBytes, maxCollBytes);
        }
    }
}
