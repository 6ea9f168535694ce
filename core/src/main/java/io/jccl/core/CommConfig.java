package io.jccl.core;

import io.jccl.core.collective.Algorithm;
import io.jccl.core.config.CoreConfig;
import io.jccl.spi.NetLogger;
import io.jccl.spi.config.Env;
import io.jccl.spi.config.SpiConfig;
import io.jccl.spi.discovery.NetPluginDiscovery;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Settings of one communicator: NCCL's {@code ncclConfig_t} plus the engine's own. Values start
 * from the environment ({@link CoreConfig}); the builder overrides them per communicator.
 *
 * <p>Channel count, buffer and chunk sizes shape the data path and must agree on every rank: init
 * takes rank 0's values and warns on a rank whose own differ.
 */
public final class CommConfig {
    /** What the proxy thread does on a pass that found no work while operations are in flight. */
    public enum ProxyIdle {
        /** Busy-spin: lowest latency, one core per communicator. */
        SPIN,
        /** {@link Thread#yield()}: lets other ranks on the same cores run. */
        YIELD,
        /** Spin, then yield, then park up to 1 ms: the default. */
        BACKOFF;

        static ProxyIdle parse(String name, String value) {
            try {
                return valueOf(value.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(name + "=" + value + " is not spin, yield or backoff", e);
            }
        }
    }

    private final String netName;
    private final int channels;
    private final int stepBytes;
    private final int p2pStepBytes;
    private final Duration timeout;
    private final Duration peerTimeout;
    private final ProxyIdle proxyIdle;
    private final boolean callerProgress;
    private final boolean sharedMemory;
    private final boolean peerToPeer;
    private final boolean peerToPeerSharedGpu;
    private final boolean netFifo;
    private final boolean netDirect;
    private final boolean netGpuDirect;
    private final boolean collNet;
    private final long lowLatencyBytes;
    private final long boardAllReduceBytes;
    private final String algorithms;
    private final String hostId;
    private final NetLogger logger;
    private final Supplier<NetPluginDiscovery> discovery;

    /** JCCL_LL_THRESHOLD's default. */
    static final long DEFAULT_LL_BYTES = 64 << 10;
    /** The largest LL threshold: a board holds two areas of it per rank. */
    static final long MAX_LL_BYTES = 1 << 20;
    /** JCCL_BOARD_ALLREDUCE=auto: decided per communicator from its ranks and the host's cores. */
    public static final long BOARD_ALLREDUCE_AUTO = -1;
    /** The board all-reduce where auto turns it on. */
    public static final long AUTO_BOARD_ALLREDUCE_BYTES = 1 << 20;
    /** The largest board all-reduce: a board holds two areas of it (and a block) per rank. */
    static final long MAX_BOARD_ALLREDUCE_BYTES = 4 << 20;

    private CommConfig(Builder b) {
        this.netName = b.netName;
        this.channels = b.channels;
        this.stepBytes = b.stepBytes;
        this.p2pStepBytes = b.p2pStepBytes;
        this.timeout = b.timeout;
        this.peerTimeout = b.peerTimeout;
        this.proxyIdle = b.proxyIdle;
        this.callerProgress = b.callerProgress;
        this.sharedMemory = b.sharedMemory;
        this.peerToPeer = b.peerToPeer;
        this.peerToPeerSharedGpu = b.peerToPeerSharedGpu;
        this.netFifo = b.netFifo;
        this.netDirect = b.netDirect;
        this.netGpuDirect = b.netGpuDirect;
        this.collNet = b.collNet;
        this.lowLatencyBytes = b.lowLatencyBytes;
        this.boardAllReduceBytes = b.boardAllReduceBytes;
        this.algorithms = b.algorithms;
        this.hostId = b.hostId;
        this.logger = b.logger;
        this.discovery = b.discovery;
    }

    /**
     * @return the settings the environment gives
     * @throws IllegalArgumentException naming the variable if one is malformed
     */
    public static CommConfig fromEnvironment() {
        return builder().build();
    }

    /** @return a builder holding the environment's settings, to override */
    public static Builder builder() {
        return new Builder();
    }

    /** @return the transport to use by name (as {@code NCCL_NET}), or {@code null} for the first usable one */
    public String netName() {
        return netName;
    }

    /** @return channels (rings) per communicator; small operations use fewer */
    public int channels() {
        return channels;
    }

    /** @return bytes per slot of ring connections: {@code NCCL_BUFFSIZE / NCCL_STEPS} */
    public int stepBytes() {
        return stepBytes;
    }

    /** @return bytes per slot of send/recv connections ({@code NCCL_P2P_NET_CHUNKSIZE}) */
    public int p2pStepBytes() {
        return p2pStepBytes;
    }

    /** @return the bound on any wait for other ranks that makes no progress */
    public Duration timeout() {
        return timeout;
    }

    /** @return the bound on detecting a dead or frozen peer */
    public Duration peerTimeout() {
        return peerTimeout;
    }

    /** @return the proxy thread's idle strategy */
    public ProxyIdle proxyIdle() {
        return proxyIdle;
    }

    /** @return whether a thread waiting for an operation runs the proxy's duty cycle itself */
    public boolean callerProgress() {
        return callerProgress;
    }

    /** @return whether all-reduces may go through a CollNet transport ({@code NCCL_COLLNET_ENABLE=1}) */
    public boolean collNet() {
        return collNet;
    }

    /** @return whether ranks of the same host connect through shared memory ({@code NCCL_SHM_DISABLE=0}) */
    public boolean sharedMemory() {
        return sharedMemory;
    }

    /**
     * @return whether GPUs of one host exchange device-buffer all-reduces directly through CUDA IPC
     *         ({@code NCCL_P2P_DISABLE=0})
     */
    public boolean peerToPeer() {
        return peerToPeer;
    }

    /** @return whether ranks sharing a GPU take the P2P ring ({@code JCCL_P2P_SHARED_GPU=1}) */
    public boolean peerToPeerSharedGpu() {
        return peerToPeerSharedGpu;
    }

    /** @return whether device collectives through the network run the kernel-and-proxy FIFO ({@code JCCL_NET_FIFO}) */
    public boolean netFifo() {
        return netFifo;
    }

    /** @return whether rings send host buffers' final bytes to the network from the buffers themselves ({@code JCCL_NET_DIRECT}) */
    public boolean netDirect() {
        return netDirect;
    }

    /** @return whether the network FIFO's slots are GPU memory handed to a transport that supports it ({@code JCCL_NET_GDR}) */
    public boolean netGpuDirect() {
        return netGpuDirect;
    }

    /**
     * @return the largest contribution a collective sends with the LL protocol (on the calling
     *         thread, in one step); 0 when LL is off ({@code NCCL_PROTO}, {@code JCCL_LL_THRESHOLD})
     */
    public long lowLatencyBytes() {
        return lowLatencyBytes;
    }

    /**
     * @return the largest all-reduce run in blocks on the shared-memory board
     *         ({@code JCCL_BOARD_ALLREDUCE}), {@link #BOARD_ALLREDUCE_AUTO} for auto; 0 when off or
     *         when LL is off
     */
    public long boardAllReduceBytes() {
        return lowLatencyBytes == 0 ? 0 : boardAllReduceBytes;
    }

    /**
     * @return the algorithms allowed, NCCL_ALGO's syntax (e.g. {@code Tree}, {@code ^Ring}); blank
     *         for all, when the tuner chooses per call
     */
    public String algorithms() {
        return algorithms;
    }

    /** @return this rank's host id ({@code NCCL_HOSTID}), or {@code null} for the host name and boot id */
    public String hostId() {
        return hostId;
    }

    /** @return the logger, or {@code null} for one configured by {@code NCCL_DEBUG} */
    public NetLogger logger() {
        return logger;
    }

    /** @return where the transports come from; called once per communicator */
    public Supplier<NetPluginDiscovery> discovery() {
        return discovery;
    }

    @Override
    public String toString() {
        return "CommConfig[net=" + (netName == null ? "auto" : netName) + ", channels=" + channels + ", stepBytes="
                + stepBytes + ", p2pStepBytes=" + p2pStepBytes + ", timeout=" + timeout.toMillis() + "ms, peerTimeout="
                + peerTimeout.toMillis() + "ms, proxyIdle=" + proxyIdle + ", callerProgress=" + callerProgress
                + ", sharedMemory=" + sharedMemory + ", peerToPeer=" + peerToPeer + ", collNet=" + collNet + ", lowLatencyBytes=" + lowLatencyBytes + ", boardAllReduceBytes=" + boardAllReduceBytes + ", algorithms="
                + (algorithms.isBlank() ? "auto" : algorithms) + "]";
    }

    /** Builds a {@link CommConfig}; starts from the environment's values. */
    public static final class Builder {
        private String netName;
        private int channels;
        private int stepBytes;
        private int p2pStepBytes;
        private Duration timeout;
        private Duration peerTimeout;
        private ProxyIdle proxyIdle;
        private boolean callerProgress;
        private boolean sharedMemory;
        private boolean peerToPeer;
        private boolean peerToPeerSharedGpu;
        private boolean netFifo = true;
        private boolean netDirect = true;
        private boolean netGpuDirect;
        private boolean collNet;
        private long lowLatencyBytes;
        private long boardAllReduceBytes = BOARD_ALLREDUCE_AUTO;
        private String algorithms;
        private String hostId;
        private NetLogger logger;
        private Supplier<NetPluginDiscovery> discovery = NetPluginDiscovery::load;

        private Builder() {
            netName = Env.get(SpiConfig.NCCL_NET);
            int min = Env.getInt(CoreConfig.NCCL_MIN_NCHANNELS, 1);
            int max = Env.getInt(CoreConfig.NCCL_MAX_NCHANNELS, CoreConfig.DEFAULT_CHANNELS);
            check(min >= 1 && min <= CoreConfig.MAX_CHANNELS, CoreConfig.NCCL_MIN_NCHANNELS + "=" + min
                    + " is outside 1.." + CoreConfig.MAX_CHANNELS);
            check(max >= 1 && max <= CoreConfig.MAX_CHANNELS, CoreConfig.NCCL_MAX_NCHANNELS + "=" + max
                    + " is outside 1.." + CoreConfig.MAX_CHANNELS);
            channels = Math.max(min, Math.min(max, CoreConfig.DEFAULT_CHANNELS));
            long buffSize = Env.getBytes(CoreConfig.NCCL_BUFFSIZE, 4L << 20);
            check(buffSize >= CoreConfig.NCCL_STEPS * 64L && buffSize <= CoreConfig.NCCL_STEPS * (256L << 20),
                    CoreConfig.NCCL_BUFFSIZE + "=" + buffSize + " is outside 512 B .. 2 GiB");
            stepBytes = alignedStep(buffSize / CoreConfig.NCCL_STEPS);
            long p2p = Env.getBytes(CoreConfig.NCCL_P2P_NET_CHUNKSIZE, 128 << 10);
            check(p2p >= 64 && p2p <= (256L << 20), CoreConfig.NCCL_P2P_NET_CHUNKSIZE + "=" + p2p
                    + " is outside 64 B .. 256 MiB");
            p2pStepBytes = alignedStep(p2p);
            long t = Env.getLong(CoreConfig.JCCL_TIMEOUT_MS, 600_000);
            check(t > 0, CoreConfig.JCCL_TIMEOUT_MS + " must be positive");
            timeout = Duration.ofMillis(t);
            long pt = Env.getLong(CoreConfig.JCCL_PEER_TIMEOUT_MS, 10_000);
            check(pt >= 100, CoreConfig.JCCL_PEER_TIMEOUT_MS + " must be at least 100");
            peerTimeout = Duration.ofMillis(pt);
            proxyIdle = ProxyIdle.parse(CoreConfig.JCCL_PROXY_IDLE, Env.get(CoreConfig.JCCL_PROXY_IDLE, "backoff"));
            int helping = Env.getInt(CoreConfig.JCCL_CALLER_PROGRESS, 1);
            check(helping == 0 || helping == 1, CoreConfig.JCCL_CALLER_PROGRESS + "=" + helping + " is not 0 or 1");
            callerProgress = helping == 1;
            int shmOff = Env.getInt(CoreConfig.NCCL_SHM_DISABLE, 0);
            check(shmOff == 0 || shmOff == 1, CoreConfig.NCCL_SHM_DISABLE + "=" + shmOff + " is not 0 or 1");
            sharedMemory = shmOff == 0;
            int p2pOff = Env.getInt(CoreConfig.NCCL_P2P_DISABLE, 0);
            check(p2pOff == 0 || p2pOff == 1, CoreConfig.NCCL_P2P_DISABLE + "=" + p2pOff + " is not 0 or 1");
            peerToPeer = p2pOff == 0;
            int shared = Env.getInt(CoreConfig.JCCL_P2P_SHARED_GPU, 0);
            check(shared == 0 || shared == 1, CoreConfig.JCCL_P2P_SHARED_GPU + "=" + shared + " is not 0 or 1");
            peerToPeerSharedGpu = shared == 1;
            int fifo = Env.getInt(CoreConfig.JCCL_NET_FIFO, 1);
            check(fifo == 0 || fifo == 1, CoreConfig.JCCL_NET_FIFO + "=" + fifo + " is not 0 or 1");
            netFifo = fifo == 1;
            int direct = Env.getInt(CoreConfig.JCCL_NET_DIRECT, 1);
            check(direct == 0 || direct == 1, CoreConfig.JCCL_NET_DIRECT + "=" + direct + " is not 0 or 1");
            netDirect = direct == 1;
            int gdr = Env.getInt(CoreConfig.JCCL_NET_GDR, 0);
            check(gdr == 0 || gdr == 1, CoreConfig.JCCL_NET_GDR + "=" + gdr + " is not 0 or 1");
            netGpuDirect = gdr == 1;
            int collNetOn = Env.getInt(CoreConfig.NCCL_COLLNET_ENABLE, 0);
            check(collNetOn == 0 || collNetOn == 1, CoreConfig.NCCL_COLLNET_ENABLE + "=" + collNetOn + " is not 0 or 1");
            collNet = collNetOn == 1;
            long ll = Env.getBytes(CoreConfig.JCCL_LL_THRESHOLD, DEFAULT_LL_BYTES);
            check(ll >= 0 && ll <= MAX_LL_BYTES, CoreConfig.JCCL_LL_THRESHOLD + "=" + ll + " is outside 0 .. "
                    + MAX_LL_BYTES);
            lowLatencyBytes = protocolAllowsLowLatency(Env.get(CoreConfig.NCCL_PROTO)) ? ll : 0;
            String board = Env.get(CoreConfig.JCCL_BOARD_ALLREDUCE);
            if (board != null && !board.isBlank() && !board.trim().equalsIgnoreCase("auto")) {
                boardAllReduceBytes(Env.getBytes(CoreConfig.JCCL_BOARD_ALLREDUCE, 0));
            }
            algorithms(Env.get(CoreConfig.NCCL_ALGO, ""));
            String id = Env.get(CoreConfig.NCCL_HOSTID);
            hostId = id == null || id.isBlank() ? null : id;
        }

        /**
         * NCCL_PROTO: a list of protocols to use, or {@code ^} and a list to leave out; names are
         * LL, LL128 and Simple, in any case.
         *
         * @return whether it allows LL
         */
        static boolean protocolAllowsLowLatency(String proto) {
            if (proto == null || proto.isBlank()) {
                return true;
            }
            String list = proto.strip();
            boolean exclude = list.startsWith("^");
            boolean named = false;
            for (String p : (exclude ? list.substring(1) : list).split(",")) {
                String name = p.strip();
                if (!name.equalsIgnoreCase("LL") && !name.equalsIgnoreCase("LL128") && !name.equalsIgnoreCase("Simple")) {
                    throw new IllegalArgumentException(CoreConfig.NCCL_PROTO + "=" + proto + ": unknown protocol '"
                            + name + "' (allowed: LL, LL128, Simple, as a list, or ^list to exclude)");
                }
                named |= name.equalsIgnoreCase("LL");
            }
            return exclude != named;
        }

        /**
         * @param setting NCCL_ALGO's syntax: a comma list of Ring and Tree (NCCL's other names
         *                accepted, without effect), or {@code ^} and a list to leave out; blank for all
         * @throws IllegalArgumentException for an unknown name, or one that leaves no algorithm
         */
        public Builder algorithms(String setting) {
            Algorithm.parseAllowed(setting);
            this.algorithms = setting == null ? "" : setting.strip();
            return this;
        }

        /**
         * @param bytes largest contribution sent with the LL protocol; 0 for none
         */
        public Builder lowLatencyBytes(long bytes) {
            check(bytes >= 0 && bytes <= MAX_LL_BYTES, "LL threshold " + bytes + " is outside 0 .. " + MAX_LL_BYTES);
            this.lowLatencyBytes = bytes;
            return this;
        }

        /**
         * @param bytes largest all-reduce run in blocks on the shared-memory board; 0 for none,
         *              {@link #BOARD_ALLREDUCE_AUTO} to decide from the host's ranks and cores
         */
        public Builder boardAllReduceBytes(long bytes) {
            check(bytes == BOARD_ALLREDUCE_AUTO || bytes >= 0 && bytes <= MAX_BOARD_ALLREDUCE_BYTES,
                    CoreConfig.JCCL_BOARD_ALLREDUCE + "=" + bytes + " is outside 0 .. " + MAX_BOARD_ALLREDUCE_BYTES
                            + " (or auto)");
            this.boardAllReduceBytes = bytes;
            return this;
        }

        private static void check(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }

        /** Slots hold whole elements of every type and stay 64-byte aligned. */
        private static int alignedStep(long bytes) {
            return (int) Math.max(64, bytes & ~63L);
        }

        /** @param name the transport's name, as {@code NCCL_NET}; {@code null} for the first usable one */
        public Builder netName(String name) {
            this.netName = name;
            return this;
        }

        /** @param n channels per communicator, 1 to 32 */
        public Builder channels(int n) {
            check(n >= 1 && n <= CoreConfig.MAX_CHANNELS, "channels must be 1.." + CoreConfig.MAX_CHANNELS + ", got " + n);
            this.channels = n;
            return this;
        }

        /** @param bytes a ring connection's buffer ({@code NCCL_BUFFSIZE}), cut into 8 slots */
        public Builder bufferSize(long bytes) {
            check(bytes >= CoreConfig.NCCL_STEPS * 64L && bytes <= CoreConfig.NCCL_STEPS * (256L << 20),
                    "buffer size " + bytes + " is outside 512 B .. 2 GiB");
            this.stepBytes = alignedStep(bytes / CoreConfig.NCCL_STEPS);
            return this;
        }

        /** @param bytes slot size of send/recv connections ({@code NCCL_P2P_NET_CHUNKSIZE}) */
        public Builder p2pChunkSize(long bytes) {
            check(bytes >= 64 && bytes <= (256L << 20), "p2p chunk size " + bytes + " is outside 64 B .. 256 MiB");
            this.p2pStepBytes = alignedStep(bytes);
            return this;
        }

        /** @param d bound on any wait for other ranks that makes no progress */
        public Builder timeout(Duration d) {
            check(!d.isNegative() && !d.isZero(), "timeout must be positive");
            this.timeout = d;
            return this;
        }

        /** @param d bound on detecting a dead or frozen peer through heartbeats */
        public Builder peerTimeout(Duration d) {
            check(d.toMillis() >= 100, "peer timeout must be at least 100 ms");
            this.peerTimeout = d;
            return this;
        }

        /** @param idle the proxy thread's idle strategy */
        public Builder proxyIdle(ProxyIdle idle) {
            this.proxyIdle = Objects.requireNonNull(idle, "idle");
            return this;
        }

        /** @param helping whether a thread waiting for an operation runs the proxy's duty cycle itself */
        public Builder callerProgress(boolean helping) {
            this.callerProgress = helping;
            return this;
        }

        /** @param on whether all-reduces may go through a CollNet transport (NCCL_COLLNET_ENABLE) */
        public Builder collNet(boolean on) {
            this.collNet = on;
            return this;
        }

        /** @param shm whether ranks of the same host connect through shared memory rather than the network */
        public Builder sharedMemory(boolean shm) {
            this.sharedMemory = shm;
            return this;
        }

        /** @param p2p whether GPUs of one host exchange device buffers directly (CUDA IPC) rather than through the host */
        public Builder peerToPeer(boolean p2p) {
            this.peerToPeer = p2p;
            return this;
        }

        /**
         * @param shared whether ranks on the same GPU take the P2P ring (their kernels must run at the same
         *               time: threads of one process, or processes under CUDA MPS; tests and benchmarks)
         */
        public Builder peerToPeerSharedGpu(boolean shared) {
            this.peerToPeerSharedGpu = shared;
            return this;
        }

        /**
         * @param on whether device collectives through the network run the kernel-and-proxy FIFO (else
         *           whole-buffer staging through pinned host memory)
         */
        public Builder netFifo(boolean on) {
            this.netFifo = on;
            return this;
        }

        /** @param on whether rings send host buffers' final bytes to the network from the buffers themselves */
        public Builder netDirect(boolean on) {
            this.netDirect = on;
            return this;
        }

        /**
         * @param on whether the network FIFO's slots are GPU memory handed to the transport (GPUDirect),
         *           where its ptrSupport has CUDA
         */
        public Builder netGpuDirect(boolean on) {
            this.netGpuDirect = on;
            return this;
        }

        /** @param id this rank's host id ({@code NCCL_HOSTID}); {@code null} for the host name and boot id */
        public Builder hostId(String id) {
            this.hostId = id == null || id.isBlank() ? null : id;
            return this;
        }

        /** @param log where the communicator and its transport log; {@code null} for {@code NCCL_DEBUG}'s */
        public Builder logger(NetLogger log) {
            this.logger = log;
            return this;
        }

        /** @param source where transports come from; called once per communicator, which closes the plugin it selects */
        public Builder discovery(Supplier<NetPluginDiscovery> source) {
            this.discovery = Objects.requireNonNull(source, "source");
            return this;
        }

        /** @return the settings */
        public CommConfig build() {
            return new CommConfig(this);
        }
    }
}
