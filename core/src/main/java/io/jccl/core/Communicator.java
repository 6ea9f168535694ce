package io.jccl.core;

import io.jccl.core.bootstrap.Bootstrap;
import io.jccl.core.bootstrap.BootstrapRoot;
import io.jccl.core.check.CollectiveKind;
import io.jccl.core.collective.Algorithm;
import io.jccl.core.collective.CollNetLinks;
import io.jccl.core.collective.DoubleBinaryTree;
import io.jccl.core.collective.DrainTask;
import io.jccl.core.collective.Operation;
import io.jccl.core.collective.OperationBuilder;
import io.jccl.core.collective.Transfer;
import io.jccl.core.collective.TreeLinks;
import io.jccl.core.collective.Tuner;
import io.jccl.core.config.CoreConfig;
import io.jccl.core.device.StagedCall;
import io.jccl.core.device.PeerRing;
import io.jccl.core.device.StreamBridge;
import io.jccl.core.kernel.MemoryKind;
import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.ll.LowLatencyPath;
import io.jccl.core.observe.CollectiveEvent;
import io.jccl.core.observe.CommunicatorEvent;
import io.jccl.core.observe.Events;
import io.jccl.core.proxy.IdleStrategy;
import io.jccl.core.proxy.Proxy;
import io.jccl.core.topology.CpuBinding;
import io.jccl.core.topology.NicChoice;
import io.jccl.core.topology.SysfsTopology;
import io.jccl.core.topology.Topology;
import io.jccl.core.topology.TopologyXml;
import io.jccl.core.transport.Connection;
import io.jccl.core.transport.ConnectionSetup;
import io.jccl.core.transport.NetRecvConnection;
import io.jccl.core.transport.NetSendConnection;
import io.jccl.core.transport.RecvConnection;
import io.jccl.core.transport.SendConnection;
import io.jccl.cuda.CudaException;
import io.jccl.cuda.CudaStream;
import io.jccl.spi.DataType;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.spi.ReduceOp;
import io.jccl.spi.config.Env;
import io.jccl.spi.discovery.NetSelection;
import io.jccl.spi.log.DebugLogger;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * A communicator: {@code nranks} ranks that run collectives together over one transport, NCCL's
 * {@code ncclComm_t}.
 *
 * <h2>Life cycle</h2>
 * One rank creates a {@link UniqueId} and hands it to the others; every rank calls
 * {@link #init(int, UniqueId, int, CommConfig)} (blocking until all have joined, bounded by the
 * timeout). Under a launcher, {@link #initFromEnvironment()} reads the rank, size and root
 * address from torchrun's, Open MPI's or Slurm's variables instead. {@link #close()} waits for the
 * work in flight and leaves together with the other ranks; {@link #abort()} leaves at once and
 * always returns.
 *
 * <h2>Operations</h2>
 * The collectives take {@link MemorySegment} buffers (host memory in this version: native or heap,
 * from any arena that the proxy thread may access) with NCCL's arguments and semantics, in-place
 * when the buffers coincide as in NCCL. Each has an asynchronous form that returns a
 * {@link Completion} and a blocking form. Every rank must issue the same collectives in the same
 * order. {@link Group} launches several operations together.
 *
 * <p>A collective small enough for the LL protocol ({@code JCCL_LL_THRESHOLD}, outside a group) runs
 * on the calling thread and returns when it is done, its asynchronous form too (with a completed
 * handle): it waits for the other ranks to make the same call, as a CUDA stream running NCCL's
 * kernel would. Issue the calls of several communicators in the same order on every rank, as NCCL
 * asks; a rank that waits in one for a peer that waits in another fails after the timeout.
 *
 * <h2>Failures</h2>
 * A failed operation fails the communicator: every pending and later operation fails with the
 * first {@link JcclException}, which names the rank to blame when there is one. A dead peer is
 * noticed within the peer timeout and every rank learns which one it was; an operation that makes
 * no progress within the timeout fails. Then {@link #abort()} (or {@link #close()}) releases it.
 */
public final class Communicator implements AutoCloseable {
    /** Bootstrap tags of the handles of ring connections: {@code RING_TAG + channel}. */
    private static final int RING_TAG = 1000;
    /** Bootstrap tag of the handle of a send/recv connection. */
    private static final int P2P_TAG = 1100;
    /** Bootstrap tags of the network ring of device buffers: {@code DEVICE_RING_TAG + channel}. */
    private static final int DEVICE_RING_TAG = 1300;
    /** Bootstrap tag of the low-latency path's set-up. */
    private static final int LL_TAG = 1200;
    /** Bootstrap tags of the halving-doubling connections: {@code HALVING_DOUBLING_TAG + channel}. */
    private static final int HALVING_DOUBLING_TAG = 1400;
    /** Bootstrap tags of tree connections: {@code TREE_TAG + (root * MAX_CHANNELS + channel) * 2 + tree}. */
    private static final int TREE_TAG = 1 << 20;
    /**
     * Most ranks for the low-latency path through a connection to each rank (the board of ranks
     * that share a host has no such limit): beyond, a rank's many messages cost more than the ring.
     */
    private static final int LL_MAX_MESH_RANKS = 16;
    private static final int OPEN = 0;
    private static final int CLOSING = 1;
    private static final int CLOSED = 2;

    private final int rank;
    private final int nranks;
    private final CommConfig config;
    private final NetLogger log;
    private final NetPlugin net;
    private final Arena arena = Arena.ofShared();
    private final Bootstrap bootstrap;
    private final int channels;
    private final int stepBytes;
    private final int p2pStepBytes;
    private final SendConnection[] ringSend;
    private final RecvConnection[] ringRecv;
    private final SendConnection[] p2pSend;
    private final RecvConnection[] p2pRecv;
    private final Proxy proxy;
    private final OperationBuilder.Ring ring;
    /** The devices of the rings' channels (channel c on devices[c % length]); trees use the same. */
    private final int[] channelDevices;
    /** Rings, trees or CollNet, per call; built alike on every rank from rank 0's NCCL_ALGO. */
    private final Tuner tuner;
    /** This rank's part in CollNet all-reduces; null without CollNet (NCCL_COLLNET_ENABLE, a transport, 2 hosts). */
    private final CollNetLinks collNet;
    /** Tree connections made so far, by {@link #treeKey}: each tree is connected on its first use. */
    private final Map<Integer, TreeLinks> trees = new HashMap<>();
    /** The halving-doubling connections made so far, by channel (guarded by {@link #trees}). */
    private final Map<Integer, OperationBuilder.HalvingDoublingLinks> halvingDoublingLinks = new HashMap<>();
    /** Ranks per host where the hosts hold equal power-of-two blocks of ranks, else 1 ({@link #hostBlock()}). */
    private final int hostBlock;
    /** Every rank's host id; ranks with this rank's id are reached through shared memory. */
    private final String[] hostIds;
    /** Each rank's {@code availableProcessors} (a CPU quota counts), from the bootstrap. */
    private final int[] coresOf;
    /** The CPUs each rank may run on (its launcher's binding; empty where unknown), from the bootstrap. */
    private final BitSet[] cpusOf;
    /** Rank 0's {@code NCCL_SHM_DISABLE}, inverted: whether same-host ranks use shared memory. */
    private boolean sharedMemory;
    private final Object submitLock = new Object();
    private final OverlapStaging overlapStaging = new OverlapStaging();
    private long sequence;
    /** The sequence number of the last operation issued, for peers diagnosing a timeout. */
    private volatile long issued;
    private volatile JcclException failure;
    private volatile int state = OPEN;
    /** Collectives on device buffers: created by the first one. */
    private volatile StreamBridge bridge;
    /** Collectives on device buffers between GPUs of this host (CUDA IPC); null if none. */
    private volatile PeerRing peerRing;
    /** Whether the first device collective has set up (or ruled out) {@link #peerRing}. */
    private boolean peerRingDecided;
    /** Small collectives on the calling thread (NCCL_PROTO's LL); {@code null} when off. */
    private final LowLatencyPath lowLatency;
    /** The last operation handed to the proxy: a small call waits for it, to keep the order of calls. */
    private volatile Operation lastLaunched;

    private Communicator(int nranks, UniqueId id, int rank, CommConfig config) {
        this.rank = rank;
        this.nranks = nranks;
        this.config = config;
        this.log = config.logger() != null ? config.logger() : DebugLogger.fromEnvironment("[" + rank + "]");
        NetSelection selection;
        try {
            selection = config.discovery().get().selectNet(config.netName(), log);
        } catch (NetException e) {
            throw new JcclException(e.result(), JcclException.NO_RANK, "rank " + rank + ": no transport: "
                    + e.getMessage(), e);
        }
        this.net = selection.plugin();
        this.hostIds = new String[nranks];
        this.coresOf = new int[nranks];
        this.cpusOf = new BitSet[nranks];
        CommunicatorEvent initEvent = Events.beginCommunicator("init", rank, nranks);
        Bootstrap b = null;
        List<Connection> made = new ArrayList<>();
        CollNetLinks collNetMade = null;
        boolean ok = false;
        try {
            b = Bootstrap.join(id.rootAddress(), id.secret(), rank, nranks, hostName(),
                    layout(net.name(), config.channels(), config.stepBytes(), config.p2pStepBytes(),
                            (int) config.lowLatencyBytes(), algorithmMask(config.algorithms()),
                            (int) config.boardAllReduceBytes(), config.sharedMemory(),
                            config.hostId() != null ? config.hostId() : defaultHostId(), config.collNet()),
                    config.timeout(),
                    config.peerTimeout(), log, this::failed);
            this.bootstrap = b;
            int[] agreed = agreeOnLayout(b);
            this.channels = agreed[0];
            this.stepBytes = agreed[1];
            this.p2pStepBytes = agreed[2];
            this.ringSend = new SendConnection[nranks == 1 ? 0 : channels];
            this.ringRecv = new RecvConnection[nranks == 1 ? 0 : channels];
            this.p2pSend = new SendConnection[nranks];
            this.p2pRecv = new RecvConnection[nranks];
            int[] devices = nranks > 1 ? ringDevices(selection.devices()) : new int[] {0};
            this.channelDevices = devices;
            if (nranks > 1) {
                made.addAll(connectRings(devices));
            }
            collNetMade = agreed[5] == 1 && nranks > 1 ? setUpCollNet(b, devices[0], made) : null;
            this.collNet = collNetMade;
            this.hostBlock = hostBlock();
            this.tuner = new Tuner(nranks, algorithmsOf(agreed[4]), allOnOneHost() ? Tuner.SHARED_MEMORY
                    : Tuner.NETWORK, collNet != null, !allOnOneHost() && (ranksEquallyFarApart() || hostBlock > 1),
                    oversubscription(), hostBlock);
            this.ring = new OperationBuilder.Ring(rank, nranks, ringSend, ringRecv, channels, stepBytes,
                    !allOnOneHost());
            this.proxy = new Proxy("jccl-proxy-r" + rank, made, IdleStrategy.of(config.proxyIdle()),
                    config.timeout().toNanos(), b::describe, log, this::failed, this::diagnoseTimeout, config.callerProgress(),
                    oversubscribedHere());
            this.lowLatency = lowLatencyPath(agreed[3], agreed[6],
                    algorithmsOf(agreed[4]).equals(EnumSet.allOf(Algorithm.class)), devices[0]);
            b.setStatusSource(() -> issued);
            proxy.start();
            b.startMonitoring();
            ok = true;
            Events.end(initEvent, net.name(), channels, "ring: " + ringTransport());
            log.info(LogSubsystem.INIT, "comm rank %d nranks %d via %s (ring: %s): %d channel%s, %d B ring slots, %d B "
                    + "p2p slots - Init COMPLETE", rank, nranks, net.name(), ringTransport(), channels, channels == 1 ? "" : "s", stepBytes,
                    p2pStepBytes);
        } finally {
            if (!ok) {
                for (Connection c : made) {
                    c.close();
                }
                if (b != null) {
                    b.close(false);
                }
                CollNetSetup.close(collNetMade);
                closePlugin();
                arena.close();
            }
        }
    }

    // ------------------------------------------------------------------ init

    /**
     * NCCL's {@code ncclCommInitRank} with the environment's settings.
     *
     * @see #init(int, UniqueId, int, CommConfig)
     */
    public static Communicator init(int nranks, UniqueId id, int rank) {
        return init(nranks, id, rank, CommConfig.fromEnvironment());
    }

    /**
     * NCCL's {@code ncclCommInitRankConfig}: joins rank {@code rank} of {@code nranks} to the
     * communicator of {@code id}. Blocks until every rank has joined and the ring connections are
     * up, at most the configured timeout.
     *
     * @throws JcclException {@link NetResult#INVALID_ARGUMENT} for bad arguments,
     *                       {@link NetResult#TIMEOUT} if the others do not join in time, and the
     *                       transport's or the network's failures otherwise
     */
    public static Communicator init(int nranks, UniqueId id, int rank, CommConfig config) {
        if (nranks < 1) {
            throw JcclException.invalidArgument("nranks must be at least 1, got " + nranks);
        }
        if (rank < 0 || rank >= nranks) {
            throw JcclException.invalidArgument("rank " + rank + " is outside 0.." + (nranks - 1));
        }
        if (id == null || config == null) {
            throw JcclException.invalidArgument("the unique id and the config must not be null");
        }
        return new Communicator(nranks, id, rank, config);
    }

    /**
     * NCCL's non-blocking {@code ncclCommInitRankConfig} ({@code blocking = 0}): starts joining on
     * a thread of its own and returns at once. The future completes with the communicator, or
     * exceptionally with the {@link JcclException} of {@link #init(int, UniqueId, int, CommConfig)}
     * (within the configured timeout: a rank that never comes fails it, never hangs it).
     */
    public static java.util.concurrent.CompletableFuture<Communicator> initAsync(int nranks, UniqueId id, int rank,
                                                                                 CommConfig config) {
        java.util.concurrent.CompletableFuture<Communicator> f = new java.util.concurrent.CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(init(nranks, id, rank, config));
            } catch (RuntimeException | Error e) {
                f.completeExceptionally(e);
            }
        }, "jccl-init-r" + rank);
        t.setDaemon(true);
        t.start();
        return f;
    }

    /**
     * Joins a communicator described by the launcher's variables, with the environment's settings.
     *
     * @see #initFromEnvironment(CommConfig)
     */
    public static Communicator initFromEnvironment() {
        return initFromEnvironment(CommConfig.fromEnvironment());
    }

    /**
     * Joins a communicator described by the launcher's variables: rank and size from torchrun's
     * {@code RANK}/{@code WORLD_SIZE}, Open MPI's {@code OMPI_COMM_WORLD_RANK}/{@code _SIZE} or
     * Slurm's {@code SLURM_PROCID}/{@code SLURM_NTASKS} (in that order); the root's address from
     * {@code NCCL_COMM_ID} or {@code MASTER_ADDR}/{@code MASTER_PORT}. Rank 0 starts the root there.
     * The secret comes from {@code JCCL_COMM_SECRET}.
     *
     * @throws JcclException {@link NetResult#INVALID_USAGE} naming the variables if they are missing
     */
    public static Communicator initFromEnvironment(CommConfig config) {
        LaunchEnvironment env = LaunchEnvironment.read();
        UniqueId id = UniqueId.at(env.root(), Env.get(CoreConfig.JCCL_COMM_SECRET));
        if (env.rank() == 0) {
            try {
                BootstrapRoot.start(new InetSocketAddress(env.root().getPort()), id.secret(), config.timeout(),
                        config.logger() != null ? config.logger() : DebugLogger.fromEnvironment("[0]"));
            } catch (IOException e) {
                throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK, "rank 0 cannot start the "
                        + "bootstrap root on port " + env.root().getPort() + " (" + env.source() + "): " + e.getMessage(), e);
            }
        }
        return init(env.size(), id, env.rank(), config);
    }

    private static byte[] layout(String netName, int channels, int stepBytes, int p2pStepBytes, int lowLatencyBytes,
                                 int algorithms, int boardAllReduceBytes, boolean shm, String hostId, boolean collNet) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeUTF(netName);
            out.writeInt(channels);
            out.writeInt(stepBytes);
            out.writeInt(p2pStepBytes);
            out.writeInt(lowLatencyBytes);
            out.writeInt(algorithms);
            out.writeInt(boardAllReduceBytes);
            out.writeBoolean(shm);
            out.writeUTF(hostId);
            out.writeBoolean(collNet);
            out.writeInt(Runtime.getRuntime().availableProcessors());
            out.writeUTF(CpuBinding.allowedList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * Every rank takes rank 0's channel layout and shared-memory setting; all must use the same
     * transport. Learns each rank's host id, which decides the peers reached through shared memory.
     *
     * @return channels, step bytes, p2p step bytes, LL bytes, algorithms, CollNet on (1) or off,
     *         board all-reduce bytes (-1: auto)
     */
    private int[] agreeOnLayout(Bootstrap b) {
        int[] agreed = new int[7];
        String netOfRank0 = null;
        for (int r = 0; r < nranks; r++) {
            try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(b.peer(r).attributes()))) {
                String netName = in.readUTF();
                int[] values = {in.readInt(), in.readInt(), in.readInt(), in.readInt(), in.readInt()};
                int board = in.readInt();
                boolean shm = in.readBoolean();
                hostIds[r] = in.readUTF();
                int collNetOn = in.readBoolean() ? 1 : 0;
                coresOf[r] = in.readInt();
                cpusOf[r] = CpuBinding.cpusOf(in.readUTF());
                if (r == 0) {
                    netOfRank0 = netName;
                    agreed = java.util.Arrays.copyOf(values, 7);
                    agreed[5] = collNetOn;
                    agreed[6] = board;
                    sharedMemory = shm;
                } else if (!netName.equalsIgnoreCase(netOfRank0)) {
                    throw new JcclException(NetResult.INVALID_USAGE, r, b.describe(r) + " uses transport " + netName
                            + " but rank 0 uses " + netOfRank0 + ": set NCCL_NET alike on every rank", null);
                }
                if (r == rank && !java.util.Arrays.equals(values, java.util.Arrays.copyOf(agreed, 5))) {
                    log.warn("rank %d: channels/buffer/LL/algorithm settings %s differ from rank 0's %s; using rank 0's", rank,
                            java.util.Arrays.toString(values), java.util.Arrays.toString(agreed));
                }
            } catch (IOException e) {
                throw new JcclException(NetResult.INTERNAL_ERROR, r, "malformed layout from rank " + r, e);
            }
        }
        return agreed;
    }

    /**
     * The transport devices the rings use, as the machine's topology says (NCCL_TOPO_FILE, else
     * sysfs): those closest to the NUMA node the rank is bound to, or all of them. Writes the
     * topology to NCCL_TOPO_DUMP_FILE if asked.
     */
    private int[] ringDevices(int devices) {
        String dump = Env.get(CoreConfig.NCCL_TOPO_DUMP_FILE);
        boolean dumping = dump != null && !dump.isBlank() && rank == Env.getInt(CoreConfig.NCCL_TOPO_DUMP_FILE_RANK, 0);
        int[] all = new int[Math.max(1, devices)];
        for (int i = 0; i < all.length; i++) {
            all[i] = i;
        }
        if (devices < 2 && !dumping) {
            return all;
        }
        String file = Env.get(CoreConfig.NCCL_TOPO_FILE);
        Topology topology;
        try {
            topology = file != null && !file.isBlank() ? TopologyXml.read(Path.of(file)) : SysfsTopology.detect();
        } catch (IllegalArgumentException | UncheckedIOException e) {
            throw JcclException.invalidArgument(CoreConfig.NCCL_TOPO_FILE + ": " + e.getMessage());
        }
        if (dumping) {
            try {
                TopologyXml.write(topology, Path.of(dump));
                log.info(LogSubsystem.INIT, "rank %d: wrote the topology to %s", rank, dump);
            } catch (UncheckedIOException e) {
                log.warn("rank %d: %s: %s", rank, CoreConfig.NCCL_TOPO_DUMP_FILE, e.getMessage());
            }
        }
        if (devices < 2) {
            return all;
        }
        List<NicChoice.Device> known = new ArrayList<>();
        for (int d = 0; d < devices; d++) {
            try {
                NetProperties p = net.getProperties(d);
                known.add(new NicChoice.Device(d, p.name(), p.pciPath()));
            } catch (NetException e) {
                return all;
            }
        }
        int numa = NicChoice.boundNumaNode();
        int[] chosen = NicChoice.devicesFor(topology, known, numa);
        if (chosen.length < devices) {
            StringBuilder names = new StringBuilder();
            for (int d : chosen) {
                names.append(names.isEmpty() ? "" : ", ").append(known.get(d).name());
            }
            log.info(LogSubsystem.INIT, "rank %d: bound to NUMA node %d: rings use its closest NICs: %s", rank, numa,
                    names);
        }
        return chosen;
    }

    /**
     * The connections of the network ring for device buffers ({@link PeerRing#overNetwork}): per
     * channel one from the previous rank and one to the next, over the kernels' FIFOs in pinned host
     * memory, through the network transport even where a neighbour shares this host.
     */
    private List<Connection> connectDeviceRing(MemorySegment[] recvFifos, MemorySegment[] sendFifos, boolean onDevice) {
        int next = (rank + 1) % nranks;
        int prev = (rank - 1 + nranks) % nranks;
        int slotBytes = (int) (recvFifos[0].byteSize() / Connection.STEPS);
        List<ConnectionSetup.Request> requests = new ArrayList<>();
        for (int c = 0; c < recvFifos.length; c++) {
            int dev = channelDevices[c % channelDevices.length];
            requests.add(new ConnectionSetup.Request(prev, false, dev, slotBytes, DEVICE_RING_TAG + c,
                    "device channel " + c + " recv from rank " + prev, false, recvFifos[c], onDevice));
            requests.add(new ConnectionSetup.Request(next, true, dev, slotBytes, DEVICE_RING_TAG + c,
                    "device channel " + c + " send to rank " + next, false, sendFifos[c], onDevice));
        }
        return ConnectionSetup.establish(requests, net, bootstrap, arena, config.timeout(), log);
    }

    /** @return whether every device the rings use reports CUDA in ptrSupport (GPUDirect is possible) */
    private boolean transportMovesGpuMemory() {
        try {
            for (int d : channelDevices) {
                if (!PointerType.CUDA.isIn(net.getProperties(d).ptrSupport())) {
                    return false;
                }
            }
            return true;
        } catch (NetException e) {
            return false;
        }
    }

    private List<Connection> connectRings(int[] devices) {
        int next = (rank + 1) % nranks;
        int prev = (rank - 1 + nranks) % nranks;
        List<ConnectionSetup.Request> requests = new ArrayList<>();
        for (int c = 0; c < channels; c++) {
            int dev = devices[c % devices.length];
            requests.add(new ConnectionSetup.Request(prev, false, dev, stepBytes, RING_TAG + c,
                    "channel " + c + " recv from rank " + prev, onThisHost(prev)));
            requests.add(new ConnectionSetup.Request(next, true, dev, stepBytes, RING_TAG + c,
                    "channel " + c + " send to rank " + next, onThisHost(next)));
        }
        List<Connection> made = ConnectionSetup.establish(requests, net, bootstrap, arena, config.timeout(), log);
        for (int c = 0; c < channels; c++) {
            ringRecv[c] = (RecvConnection) made.get(2 * c);
            ringSend[c] = (SendConnection) made.get(2 * c + 1);
            if (config.netDirect() && ringSend[c] instanceof NetSendConnection n) {
                n.allowDirect();
            }
            if (config.netDirect() && ringRecv[c] instanceof NetRecvConnection n) {
                n.allowDirect();
            }
        }
        return made;
    }

    /**
     * The LL protocol's path, if rank 0's settings allow it: a board when every rank shares this
     * host (and shared memory is on), else a connection to each rank, for at most
     * {@link #LL_MAX_MESH_RANKS} ranks. Every rank decides alike from what all know.
     */
    private LowLatencyPath lowLatencyPath(int bytes, int boardAllReduce, boolean anyAlgorithm, int device) {
        boolean[] sameHost = new boolean[nranks];
        boolean allLocal = true;
        for (int r = 0; r < nranks; r++) {
            sameHost[r] = r == rank || onThisHost(r);
            allLocal &= sameHost[r];
        }
        if (bytes <= 0 || (!allLocal && nranks > LL_MAX_MESH_RANKS)) {
            return null;
        }
        // Through a connection to each rank, every contribution is sent n-1 times: the threshold
        // bounds the bytes a rank sends, as on a ring step (4 ranks over loopback TCP on 2 cores:
        // 64 KiB took 526-643 us this way, 289-360 by halving-doubling; 32 KiB 299-340 against 235-278).
        long limit = allLocal || nranks <= 2 ? bytes : Math.max(1, bytes / (nranks - 1));
        // Beyond that, an all-reduce of a power of two of ranks through connections goes by
        // recursive doubling, one message of the whole buffer in each of log2(n) rounds, up to
        // twice the threshold sent (over loopback TCP on 2 cores, us: 4 ranks, 2000 calls, 32 KiB
        // 159-166 against halving-doubling's 235-294 and Open MPI's 198-206, 64 KiB 183-345
        // against 305-330 and 265-318; 2 ranks, 5000 calls, 128 KiB 43-62 against the ring's
        // 69-81). An all-reduce of ranks that share a host and its cores runs on the board in
        // blocks (4 ranks on 2 cores, 1 MiB: 389-423 us against the ring's 441-581; on 2 ranks with
        // a core each the ring is the faster, 178 us against 196). Auto leaves an NCCL_ALGO choice alone.
        int rounds = Integer.numberOfTrailingZeros(nranks);
        long allReduceMax = !allLocal ? (Integer.bitCount(nranks) == 1 ? 2L * bytes / rounds : limit)
                : nranks == 1 ? limit
                : boardAllReduce == CommConfig.BOARD_ALLREDUCE_AUTO
                        ? (oversubscribedHere() && anyAlgorithm ? CommConfig.AUTO_BOARD_ALLREDUCE_BYTES : 0)
                        : boardAllReduce;
        return new LowLatencyPath(rank, nranks, limit, Math.max(limit, allReduceMax), new LowLatencyPath.Links(bootstrap, net, device, arena,
                config.timeout(), log, sameHost, oversubscribedHere(), LL_TAG), () -> failure, this::diagnose);
    }

    /** @return NCCL_ALGO's algorithms as bits of {@link Algorithm#ordinal()}, for the layout rank 0 sends */
    private static int algorithmMask(String setting) {
        int mask = 0;
        for (Algorithm a : Algorithm.parseAllowed(setting)) {
            mask |= 1 << a.ordinal();
        }
        return mask;
    }

    private static Set<Algorithm> algorithmsOf(int mask) {
        EnumSet<Algorithm> set = EnumSet.noneOf(Algorithm.class);
        for (Algorithm a : Algorithm.values()) {
            if ((mask & (1 << a.ordinal())) != 0) {
                set.add(a);
            }
        }
        return set.isEmpty() ? EnumSet.allOf(Algorithm.class) : set;
    }

    /** @return whether every rank shares this host and shared memory is on: the tuner's shared-memory costs */
    private boolean allOnOneHost() {
        for (int r = 0; r < nranks; r++) {
            if (r != rank && !onThisHost(r)) {
                return false;
            }
        }
        return true;
    }

    /**
     * This rank's connections in tree {@code tree} of {@code channel} rooted at {@code root},
     * connected on first use: every rank's tuner makes the same choice for the same call, so the
     * ranks of a tree reach this for the same call, and connect in call order.
     */
    private TreeLinks treeLinks(int root, int channel, int tree) {
        int key = treeKey(root, channel, tree);
        synchronized (trees) {
            TreeLinks links = trees.get(key);
            if (links != null) {
                return links;
            }
            DoubleBinaryTree.Node node = DoubleBinaryTree.node(nranks, rank, root, tree);
            int dev = channelDevices[channel % channelDevices.length];
            int tag = TREE_TAG + key;
            String what = "tree " + tree + " (root " + root + ") channel " + channel;
            List<ConnectionSetup.Request> requests = new ArrayList<>();
            int parent = node.parent();
            if (!node.isRoot()) {
                requests.add(new ConnectionSetup.Request(parent, true, dev, stepBytes, tag, what + " send to parent "
                        + parent, onThisHost(parent)));
                requests.add(new ConnectionSetup.Request(parent, false, dev, stepBytes, tag, what + " recv from parent "
                        + parent, onThisHost(parent)));
            }
            for (int child : node.children()) {
                requests.add(new ConnectionSetup.Request(child, true, dev, stepBytes, tag, what + " send to child "
                        + child, onThisHost(child)));
                requests.add(new ConnectionSetup.Request(child, false, dev, stepBytes, tag, what + " recv from child "
                        + child, onThisHost(child)));
            }
            List<Connection> made = establishOrFail(requests);
            int k = 0;
            SendConnection up = null;
            RecvConnection fromParent = null;
            if (!node.isRoot()) {
                up = (SendConnection) made.get(k++);
                fromParent = (RecvConnection) made.get(k++);
            }
            int children = node.children().length;
            SendConnection[] down = new SendConnection[children];
            RecvConnection[] fromChildren = new RecvConnection[children];
            for (int i = 0; i < children; i++) {
                down[i] = (SendConnection) made.get(k++);
                fromChildren[i] = (RecvConnection) made.get(k++);
            }
            proxy.addConnections(made);
            links = new TreeLinks(tree, up, fromParent, down, fromChildren);
            trees.put(key, links);
            log.info(LogSubsystem.INIT, "rank %d: connected %s: parent %d, children %s", rank, what, parent,
                    java.util.Arrays.toString(node.children()));
            return links;
        }
    }

    /** @return trees (of a channel and root) this rank has connected so far; for tests */
    int treeConnections() {
        synchronized (trees) {
            return trees.size();
        }
    }

    private static int treeKey(int root, int channel, int tree) {
        return (root * CoreConfig.MAX_CHANNELS + channel) * 2 + tree;
    }

    /**
     * This rank's connections to its halving-doubling partners, connected on first use: every
     * rank's tuner gives the same calls to halving-doubling, so all ranks reach this for the same
     * call and connect together.
     */
    private OperationBuilder.HalvingDoublingLinks halvingDoublingLinks(int channel) {
        synchronized (trees) {
            OperationBuilder.HalvingDoublingLinks links = halvingDoublingLinks.get(channel);
            if (links != null) {
                return links;
            }
            int[] partners = OperationBuilder.HalvingDoublingLinks.partners(nranks, rank, hostBlock);
            int dev = channelDevices[channel % channelDevices.length];
            List<ConnectionSetup.Request> requests = new ArrayList<>();
            for (int p : partners) {
                requests.add(new ConnectionSetup.Request(p, true, dev, stepBytes, HALVING_DOUBLING_TAG + channel,
                        "halving-doubling channel " + channel + " send to rank " + p, onThisHost(p)));
                requests.add(new ConnectionSetup.Request(p, false, dev, stepBytes, HALVING_DOUBLING_TAG + channel,
                        "halving-doubling channel " + channel + " recv from rank " + p, onThisHost(p)));
            }
            List<Connection> made = establishOrFail(requests);
            SendConnection[] to = new SendConnection[partners.length];
            RecvConnection[] from = new RecvConnection[partners.length];
            for (int r = 0; r < partners.length; r++) {
                to[r] = (SendConnection) made.get(2 * r);
                from[r] = (RecvConnection) made.get(2 * r + 1);
                if (config.netDirect() && to[r] instanceof NetSendConnection n) {
                    n.allowDirect();
                }
                if (config.netDirect() && from[r] instanceof NetRecvConnection n) {
                    n.allowDirect();
                }
            }
            proxy.addConnections(made);
            links = new OperationBuilder.HalvingDoublingLinks(
                    OperationBuilder.HalvingDoublingLinks.position(nranks, rank, hostBlock), to, from);
            halvingDoublingLinks.put(channel, links);
            log.info(LogSubsystem.INIT, "rank %d: connected halving-doubling channel %d to partners %s%s", rank, channel,
                    Arrays.toString(partners), hostBlock > 1 ? " (inside its host of " + hostBlock + " ranks first)" : "");
            return links;
        }
    }

    /** Sets up connections after init (trees, halving-doubling, send/recv); a failure fails the communicator. */
    private List<Connection> establishOrFail(List<ConnectionSetup.Request> requests) {
        try {
            return ConnectionSetup.establish(requests, net, bootstrap, arena, config.timeout(), log);
        } catch (JcclException e) {
            failed(e);
            throw e;
        }
    }

    private OperationBuilder newBuilder() {
        return new OperationBuilder(ring, tuner, this::treeLinks, collNet).withHalvingDoubling(this::halvingDoublingLinks);
    }

    /** CollNet's set-up, collective on every rank; null when it is off. */
    private CollNetLinks setUpCollNet(Bootstrap b, int device, List<Connection> made) {
        boolean[] sameHost = new boolean[nranks];
        for (int r = 0; r < nranks; r++) {
            sameHost[r] = r != rank && onThisHost(r);
        }
        return CollNetSetup.connect(new CollNetSetup.Context(rank, nranks, hostIds, b, net, device, stepBytes, arena,
                config.timeout(), log, config.discovery().get(), sameHost), made);
    }

    /**
     * @return whether every pair of ranks is as far apart as any other: each on a host of its own,
     *         or all on one host (the same answer on every rank: all know every rank's host)
     */
    private boolean ranksEquallyFarApart() {
        Set<String> hosts = new HashSet<>(Arrays.asList(hostIds));
        return hosts.size() == 1 || hosts.size() == nranks;
    }

    /**
     * @return {@code p} where the hosts hold equal, contiguous blocks of {@code p} ranks (rank
     *         {@code r} on the {@code r / p}th host), {@code p} and the number of hosts both powers
     *         of two above 1, as launchers place ranks; else 1. Halving-doubling then pairs ranks
     *         inside a host first, and crosses hosts only in its last rounds. The same on every
     *         rank: all know every rank's host.
     */
    private int hostBlock() {
        int p = 1;
        while (p < nranks && hostIds[p].equals(hostIds[0])) {
            p++;
        }
        if (p == 1 || p == nranks || Integer.bitCount(p) != 1 || Integer.bitCount(nranks) != 1) {
            return 1;
        }
        Set<String> hosts = new HashSet<>();
        for (int r = 0; r < nranks; r++) {
            if (!hostIds[r].equals(hostIds[r / p * p]) || (r % p == 0 && !hosts.add(hostIds[r]))) {
                return 1;
            }
        }
        return p;
    }

    /**
     * @return the most ranks per core on any host of the communicator, at least 1: every rank
     *         computes it from every rank's host id, core count and CPU binding, so all tuners agree
     */
    private double oversubscription() {
        return CpuBinding.ranksPerCore(hostIds, coresOf, cpusOf);
    }

    /**
     * @return whether this host has more of the communicator's ranks (shared memory or not) than
     *         cores they run on together: a rank that waits should then give its core up soon
     */
    private boolean oversubscribedHere() {
        return CpuBinding.ranksPerCoreOn(hostIds[rank], hostIds, coresOf, cpusOf) > 1;
    }

    /** @return whether {@code peer} is reached through shared memory: same host id, and rank 0 allows it */
    private boolean onThisHost(int peer) {
        return sharedMemory && hostIds[peer].equals(hostIds[rank]);
    }

    /**
     * NCCL's host identity where {@code NCCL_HOSTID} is unset: the host name and the kernel's boot
     * id (two containers may share a host name, not a boot id and a name).
     */
    private static String defaultHostId() {
        String boot = "";
        try {
            boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
        } catch (IOException | RuntimeException e) {
            // No boot id (not Linux): the host name alone.
        }
        return hostName() + "/" + boot;
    }

    private static String hostName() {
        String h = System.getenv("HOSTNAME");
        if (h != null && !h.isBlank()) {
            return h;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }

    // ------------------------------------------------------------------ queries

    /** @return this rank, {@code 0 <= rank < size} */
    public int rank() {
        return rank;
    }

    /** @return the number of ranks (NCCL's {@code ncclCommCount}) */
    public int size() {
        return nranks;
    }

    /** @return the name of the transport in use, e.g. {@code JcclSocket} */
    public String transport() {
        return net.name();
    }

    /**
     * @return messages this rank sent to the network straight from the caller's buffers (rings and
     *         halving-doubling), without a copy into a slot ({@code JCCL_NET_DIRECT})
     */
    public long directSends() {
        long n = 0;
        for (Connection c : proxy.connections()) {
            if (c instanceof NetSendConnection s) {
                n += s.directSends();
            }
        }
        return n;
    }

    /** @return messages this rank's rings received from the network straight into the caller's output ({@code JCCL_NET_DIRECT}) */
    public long directReceives() {
        long n = 0;
        for (Connection c : proxy.connections()) {
            if (c instanceof NetRecvConnection r) {
                n += r.directReceives();
            }
        }
        return n;
    }

    /**
     * @return what carries this rank's ring connections: {@code SHM} (shared memory with ranks of
     *         this host), the network transport's name, both, or {@code local} for one rank
     */
    public String ringTransport() {
        boolean shm = false;
        boolean network = false;
        for (Connection c : ringSend) {
            shm |= c.transport().equals("shm");
            network |= c.transport().equals("net");
        }
        for (Connection c : ringRecv) {
            shm |= c.transport().equals("shm");
            network |= c.transport().equals("net");
        }
        return shm && network ? "SHM and " + net.name() : shm ? "SHM" : network ? net.name() : "local";
    }

    /**
     * @return which protocol runs a collective, by size: e.g. {@code LL up to 16384 B a rank
     *         (shared-memory board), Simple (ring, 2 channels) above}
     */
    public String protocols() {
        Set<Algorithm> algorithms = tuner.allowed();
        String simple = "Simple (" + (algorithms.size() == 2 && nranks > 2 ? "tree or ring, by the tuner, "
                : algorithms.contains(Algorithm.TREE) && nranks > 2 ? "tree where it applies, " : "ring, ")
                + channels + " channel" + (channels == 1 ? "" : "s") + ")";
        LowLatencyPath ll = lowLatency;
        if (ll == null) {
            return simple;
        }
        String board = ll.allReduceMaxBytes() <= ll.maxBytes() ? ""
                : "; all-reduce up to " + ll.allReduceMaxBytes() + " B " + ll.describeLargeAllReduce();
        return "LL up to " + ll.maxBytes() + " B a rank (" + ll.describe() + board + "), " + simple + " above";
    }

    /**
     * @return whether collectives on device buffers (all but all-to-all and send/recv) go straight
     *         from GPU to GPU (CUDA IPC or peer
     *         access, every rank on this host with a GPU of its own), as set up by the first one;
     *         false before it and where they go through pinned host staging
     */
    public boolean usesPeerToPeer() {
        PeerRing p = peerRing;
        return p != null && !p.overNetwork();
    }

    /**
     * @return whether collectives on device buffers (all but all-to-all and send/recv) run the network
     *         FIFO (GPU kernels filling and draining pinned host slots that the proxy moves), as set up
     *         by the first one; false before it
     */
    public boolean usesNetworkFifo() {
        PeerRing p = peerRing;
        return p != null && p.overNetwork();
    }

    /**
     * @return whether the network FIFO's slots are GPU memory handed to the transport (GPUDirect:
     *         {@code JCCL_NET_GDR=1} and a transport whose ptrSupport has CUDA)
     */
    public boolean usesNetworkGpuDirect() {
        PeerRing p = peerRing;
        return p != null && p.overNetwork() && p.slotsInGpuMemory();
    }

    /** @return whether collectives on device buffers run GPU kernels: {@link #usesPeerToPeer} or {@link #usesNetworkFifo} */
    public boolean usesPeerRing() {
        return peerRing != null;
    }

    /**
     * What runs a call of {@code kind} of {@code bytes} (the size nccl-tests prints: all-reduce's
     * buffer, all-gather's output), as the tuner decides on every rank: {@code LL} (on the calling
     * thread), {@code Tree} or {@code Ring} (through the proxy), {@code P2P} (all-to-all and
     * send/recv), or {@code local} on one rank.
     */
    public String algorithmFor(CollectiveKind kind, long bytes) {
        if (nranks == 1) {
            return "local";
        }
        long contribution = switch (kind) {
            case ALL_GATHER -> bytes / nranks;
            default -> bytes;
        };
        Tuner.Collective collective = switch (kind) {
            case ALL_REDUCE -> Tuner.Collective.ALL_REDUCE;
            case BROADCAST -> Tuner.Collective.BROADCAST;
            case REDUCE -> Tuner.Collective.REDUCE;
            case ALL_GATHER -> Tuner.Collective.ALL_GATHER;
            case REDUCE_SCATTER -> Tuner.Collective.REDUCE_SCATTER;
            case ALL_TO_ALL, SEND_RECV -> null;
        };
        if (collective == null) {
            return "P2P";
        }
        LowLatencyPath ll = lowLatency;
        if (ll != null && (collective == Tuner.Collective.ALL_REDUCE ? ll.acceptsAllReduce(contribution)
                : ll.accepts(contribution))) {
            return "LL";
        }
        return tuner.choose(collective, bytes).ncclName();
    }

    /** @return channels (rings) in use; rank 0's setting */
    public int channels() {
        return channels;
    }

    /**
     * NCCL's {@code ncclCommGetAsyncError}.
     *
     * @return the failure of the communicator, or {@code null} while it is healthy
     */
    public JcclException asyncError() {
        checkPeerRing();
        return failure;
    }

    // ------------------------------------------------------------------ elastic membership

    /**
     * NCCL's {@code ncclCommRevoke}: this rank's pending and later operations fail at once, and so
     * do every other rank's (it is told, as of a failure), so that no rank waits on a rank that
     * will not come. The communicator can then be {@link #shrink shrunk}, and must still be
     * {@link #abort aborted} (or closed) to release it. Returns at once; calling it again, or on a
     * failed communicator, does nothing more.
     */
    public void revoke() {
        if (state == CLOSED) {
            throw JcclException.invalidUsage("revoke: the communicator of rank " + rank + " is closed");
        }
        failed(new JcclException(NetResult.REMOTE_ERROR, rank, "rank " + rank + " revoked the communicator", null));
    }

    /**
     * NCCL's {@code ncclCommShrink}: a new communicator of every rank but {@code excluded}, made
     * by the survivors among themselves (no unique id from outside). Every surviving rank calls
     * it with the same excluded ranks, typically after a failure ({@link #asyncError()} names the
     * rank that failed); excluded ranks do not call it. This communicator is revoked first (its
     * pending operations fail) and stays to be {@link #abort aborted}.
     *
     * <p>The survivors keep their order: rank {@code r} becomes {@code r} minus the excluded ranks
     * below it. The lowest survivor leads: it collects every other survivor's excluded list over
     * the bootstrap links (which outlive the failure), checks they agree, and hands out the new
     * communicator's id; all then join it. Bounded by the communicator's timeout: a survivor that
     * dies, or one that does not call, fails the others with an error naming it.
     *
     * @param excluded the ranks to leave out (dead, frozen, or leaving on purpose); may be empty
     * @return this rank's communicator among the survivors
     * @throws JcclException {@link NetResult#INVALID_ARGUMENT} if the list names this rank, a rank
     *                       twice or no rank of this communicator; {@link NetResult#INVALID_USAGE}
     *                       if the survivors' lists differ; the failure of a survivor otherwise
     */
    public Communicator shrink(int... excluded) {
        if (state == CLOSED) {
            throw JcclException.invalidUsage("shrink: the communicator of rank " + rank + " is closed");
        }
        int[] sorted = excluded == null ? new int[0] : excluded.clone();
        java.util.Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            if (sorted[i] < 0 || sorted[i] >= nranks) {
                throw JcclException.invalidArgument("shrink: rank " + sorted[i] + " is outside 0.." + (nranks - 1));
            }
            if (i > 0 && sorted[i] == sorted[i - 1]) {
                throw JcclException.invalidArgument("shrink: rank " + sorted[i] + " is excluded twice");
            }
            if (sorted[i] == rank) {
                throw JcclException.invalidArgument("shrink: rank " + rank + " excludes itself: excluded ranks do "
                        + "not call shrink");
            }
        }
        List<Integer> survivors = new ArrayList<>();
        for (int r = 0; r < nranks; r++) {
            if (java.util.Arrays.binarySearch(sorted, r) < 0) {
                survivors.add(r);
            }
        }
        revoke();
        int leader = survivors.get(0);
        String mine = java.util.Arrays.toString(sorted);
        Duration wait = config.timeout();
        // Every caller tells every rank not known dead which ranks it excludes, so that survivors
        // whose lists differ all learn it, even one that the other excludes.
        byte[] list = concat(new byte[] {LIST}, mine.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        for (int r = 0; r < nranks; r++) {
            if (r != rank && !bootstrap.isGone(r)) {
                try {
                    bootstrap.sendRecovery(r, list);
                } catch (JcclException e) {
                    log.info(LogSubsystem.INIT, "rank %d: shrink: rank %d did not take the list: %s", rank, r,
                            e.getMessage());
                }
            }
        }
        String disagreement = null;
        for (int r : survivors) {
            if (r == rank) {
                continue;
            }
            byte[] theirs = bootstrap.receiveRecovery(r, wait);
            String text = recoveryText(java.util.Arrays.copyOfRange(theirs, 1, theirs.length));
            if (theirs[0] != LIST || !text.equals(mine)) {
                disagreement = "rank " + r + " excludes " + text + " where rank " + rank + " excludes " + mine;
                break;
            }
        }
        if (disagreement != null) {
            throw JcclException.invalidUsage("shrink: the survivors disagree on the ranks to exclude: " + disagreement
                    + " (every survivor must pass the same ranks)");
        }
        // All agree: the lowest survivor starts the new communicator's root and hands out its id.
        UniqueId id;
        if (rank == leader) {
            id = UniqueId.create(wait);
            byte[] message = concat(new byte[] {ID}, id.toBytes());
            for (int r : survivors.subList(1, survivors.size())) {
                bootstrap.sendRecovery(r, message);
            }
        } else {
            byte[] message = bootstrap.receiveRecovery(leader, wait);
            if (message.length == 0 || message[0] != ID) {
                throw new JcclException(NetResult.INTERNAL_ERROR, leader, "shrink: rank " + leader + " sent no id", null);
            }
            id = UniqueId.fromBytes(java.util.Arrays.copyOfRange(message, 1, message.length));
        }
        log.info(LogSubsystem.INIT, "rank %d: shrinking to %d ranks without %s (led by rank %d)", rank,
                survivors.size(), mine, leader);
        return init(survivors.size(), id, survivors.indexOf(rank), config);
    }

    /**
     * NCCL's {@code ncclCommGetUniqueId} for growing: starts the bootstrap root of a larger
     * communicator on this rank and returns its id, which the caller hands to the new processes
     * (they join with {@link #init(int, UniqueId, int, CommConfig)} as ranks {@code size()} and up)
     * and passes to its own {@link #grow}. One rank of the communicator calls it.
     */
    public UniqueId growId() {
        checkUsable();
        return UniqueId.create(config.timeout());
    }

    /**
     * NCCL's {@code ncclCommGrow}: every rank of this communicator joins a communicator of
     * {@code newSize} ranks, keeping its rank; new processes join as ranks {@code size()} to
     * {@code newSize - 1} with the id of {@link #growId()}. The rank that issued the id passes it,
     * the others {@code null}: they learn it from that rank over this communicator's bootstrap.
     * This communicator stays usable until it is closed.
     *
     * @throws JcclException {@link NetResult#INVALID_ARGUMENT} if {@code newSize} is not larger,
     *                       {@link NetResult#INVALID_USAGE} if no rank or several passed an id
     */
    public Communicator grow(int newSize, UniqueId id) {
        checkUsable();
        if (newSize <= nranks) {
            throw JcclException.invalidArgument("grow: the new size " + newSize + " is not larger than " + nranks);
        }
        byte[][] all = bootstrap.allGather(id == null ? new byte[0] : id.toBytes());
        UniqueId agreed = null;
        int issuers = 0;
        for (byte[] b : all) {
            if (b.length > 0) {
                issuers++;
                agreed = UniqueId.fromBytes(b);
            }
        }
        if (issuers != 1) {
            throw JcclException.invalidUsage("grow: " + issuers + " ranks passed an id; exactly one rank (the one that "
                    + "called growId) passes it, the others null");
        }
        log.info(LogSubsystem.INIT, "rank %d: growing from %d to %d ranks", rank, nranks, newSize);
        return init(newSize, agreed, rank, config);
    }

    /** Recovery messages of {@link #shrink}: a survivor's excluded ranks, then the leader's new id. */
    private static final byte LIST = 1;
    private static final byte ID = 2;

    private static String recoveryText(byte[] b) {
        return new String(b, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    // ------------------------------------------------------------------ collectives

    /** NCCL's {@code ncclAllReduce}: every rank's {@code recv} gets the reduction of every rank's {@code send}. */
    public Completion allReduceAsync(MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op) {
        long bytes = bytes(count, type);
        checkBuffer("sendbuff", send, bytes);
        checkBuffer("recvbuff", recv, bytes);
        ReductionKernel k = kernel(type, op, send, recv);
        if (smallAllReduce(bytes)) {
            long seq = enterSmall();
            CollectiveEvent event = Events.beginCollective("allReduce", bytes, "LL", rank, nranks, seq);
            try {
                lowLatency.allReduce(seq, send, recv, count, type, op, k);
            } catch (JcclException e) {
                Events.end(event, true);
                throw failedSmall(e);
            }
            Events.end(event, false);
            return CompletedCall.INSTANCE;
        }
        return issue(b -> b.allReduce(send, recv, count, type, op, k));
    }

    /** Blocking {@link #allReduceAsync}. */
    public void allReduce(MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op) {
        blocking("allReduce");
        allReduceAsync(send, recv, count, type, op).await();
    }

    /**
     * NCCL's {@code ncclBroadcast}: {@code count} elements of the root's {@code send} to every
     * rank's {@code recv}. {@code send} is read on the root only (others may pass {@code null});
     * in-place when the root passes the same buffer twice.
     */
    public Completion broadcastAsync(MemorySegment send, MemorySegment recv, long count, DataType type, int root) {
        long bytes = bytes(count, type);
        checkRoot(root);
        if (rank == root) {
            checkBuffer("sendbuff", send, bytes);
        }
        checkBuffer("recvbuff", recv, bytes);
        ReductionKernel k = kernel(type, null, send, recv);
        if (small(bytes)) {
            long seq = enterSmall();
            CollectiveEvent event = Events.beginCollective("broadcast", bytes, "LL", rank, nranks, seq);
            try {
                lowLatency.broadcast(seq, send, recv, count, type, root, k);
            } catch (JcclException e) {
                Events.end(event, true);
                throw failedSmall(e);
            }
            Events.end(event, false);
            return CompletedCall.INSTANCE;
        }
        return issue(b -> b.broadcast(send, recv, count, type, root, k));
    }

    /** Blocking {@link #broadcastAsync}. */
    public void broadcast(MemorySegment send, MemorySegment recv, long count, DataType type, int root) {
        blocking("broadcast");
        broadcastAsync(send, recv, count, type, root).await();
    }

    /**
     * NCCL's {@code ncclReduce}: the root's {@code recv} gets the reduction of every rank's
     * {@code send}; {@code recv} is written on the root only (others may pass {@code null}).
     */
    public Completion reduceAsync(MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op,
                                  int root) {
        long bytes = bytes(count, type);
        checkRoot(root);
        checkBuffer("sendbuff", send, bytes);
        if (rank == root) {
            checkBuffer("recvbuff", recv, bytes);
        }
        ReductionKernel k = kernel(type, op, send, recv);
        if (small(bytes)) {
            long seq = enterSmall();
            CollectiveEvent event = Events.beginCollective("reduce", bytes, "LL", rank, nranks, seq);
            try {
                lowLatency.reduce(seq, send, recv, count, type, op, root, k);
            } catch (JcclException e) {
                Events.end(event, true);
                throw failedSmall(e);
            }
            Events.end(event, false);
            return CompletedCall.INSTANCE;
        }
        return issue(b -> b.reduce(send, recv, count, type, op, root, k));
    }

    /** Blocking {@link #reduceAsync}. */
    public void reduce(MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op, int root) {
        blocking("reduce");
        reduceAsync(send, recv, count, type, op, root).await();
    }

    /**
     * NCCL's {@code ncclAllGather}: {@code sendCount} elements from every rank, gathered in rank
     * order into every rank's {@code recv} ({@code size() * sendCount} elements). In-place when
     * {@code send} is {@code recv}'s slice at {@code rank() * sendCount}.
     */
    public Completion allGatherAsync(MemorySegment send, MemorySegment recv, long sendCount, DataType type) {
        long bytes = bytes(sendCount, type);
        checkBuffer("sendbuff", send, bytes);
        checkBuffer("recvbuff", recv, Math.multiplyExact(bytes, nranks));
        ReductionKernel k = kernel(type, null, send, recv);
        if (small(bytes)) {
            long seq = enterSmall();
            CollectiveEvent event = Events.beginCollective("allGather", bytes, "LL", rank, nranks, seq);
            try {
                lowLatency.allGather(seq, send, recv, sendCount, type, k);
            } catch (JcclException e) {
                Events.end(event, true);
                throw failedSmall(e);
            }
            Events.end(event, false);
            return CompletedCall.INSTANCE;
        }
        return issue(b -> b.allGather(send, recv, sendCount, type, k));
    }

    /** Blocking {@link #allGatherAsync}. */
    public void allGather(MemorySegment send, MemorySegment recv, long sendCount, DataType type) {
        blocking("allGather");
        allGatherAsync(send, recv, sendCount, type).await();
    }

    /**
     * NCCL's {@code ncclReduceScatter}: the reduction of every rank's {@code send}
     * ({@code size() * recvCount} elements), block {@code r} to rank {@code r}'s {@code recv}.
     * In-place when {@code recv} is {@code send}'s slice at {@code rank() * recvCount}.
     */
    public Completion reduceScatterAsync(MemorySegment send, MemorySegment recv, long recvCount, DataType type,
                                         ReduceOp op) {
        long bytes = bytes(recvCount, type);
        checkBuffer("sendbuff", send, Math.multiplyExact(bytes, nranks));
        checkBuffer("recvbuff", recv, bytes);
        ReductionKernel k = kernel(type, op, send, recv);
        if (small(bytes * nranks)) {
            long seq = enterSmall();
            CollectiveEvent event = Events.beginCollective("reduceScatter", bytes * nranks, "LL", rank, nranks, seq);
            try {
                lowLatency.reduceScatter(seq, send, recv, recvCount, type, op, k);
            } catch (JcclException e) {
                Events.end(event, true);
                throw failedSmall(e);
            }
            Events.end(event, false);
            return CompletedCall.INSTANCE;
        }
        return issue(b -> b.reduceScatter(send, recv, recvCount, type, op, k));
    }

    /** Blocking {@link #reduceScatterAsync}. */
    public void reduceScatter(MemorySegment send, MemorySegment recv, long recvCount, DataType type, ReduceOp op) {
        blocking("reduceScatter");
        reduceScatterAsync(send, recv, recvCount, type, op).await();
    }

    /**
     * NCCL's {@code ncclAlltoAll}: block {@code p} of {@code send} ({@code count} elements at
     * {@code p * count}) goes to rank {@code p}, which stores it as block {@code rank()} of its
     * {@code recv}. Runs as a group of sends and receives. In-place works too (the input is staged).
     */
    public Completion allToAllAsync(MemorySegment send, MemorySegment recv, long count, DataType type) {
        long bytes = bytes(count, type);
        long total = Math.multiplyExact(bytes, nranks);
        checkBuffer("sendbuff", send, total);
        checkBuffer("recvbuff", recv, total);
        kernel(type, null, send, recv);
        return issue(b -> b.allToAll(send, recv, bytes));
    }

    /** Blocking {@link #allToAllAsync}. */
    public void allToAll(MemorySegment send, MemorySegment recv, long count, DataType type) {
        blocking("allToAll");
        allToAllAsync(send, recv, count, type).await();
    }

    /**
     * NCCL's {@code ncclSend}: {@code count} elements to {@code peer}, which must post a matching
     * {@link #recvAsync}. Sends to one peer are received in the order they were issued. Issue a
     * send and the receive it depends on in one {@link Group}.
     */
    public Completion sendAsync(MemorySegment buffer, long count, DataType type, int peer) {
        long bytes = bytes(count, type);
        checkPeer(peer);
        checkBuffer("sendbuff", buffer, bytes);
        kernel(type, null, buffer, buffer);
        return issue(b -> b.send(peer, new Transfer(buffer, 0, bytes)));
    }

    /** Blocking {@link #sendAsync}. */
    public void send(MemorySegment buffer, long count, DataType type, int peer) {
        blocking("send");
        sendAsync(buffer, count, type, peer).await();
    }

    /** NCCL's {@code ncclRecv}: {@code count} elements from {@code peer}; the counts must match its send. */
    public Completion recvAsync(MemorySegment buffer, long count, DataType type, int peer) {
        long bytes = bytes(count, type);
        checkPeer(peer);
        checkBuffer("recvbuff", buffer, bytes);
        kernel(type, null, buffer, buffer);
        return issue(b -> b.recv(peer, new Transfer(buffer, 0, bytes)));
    }

    /** Blocking {@link #recvAsync}. */
    public void recv(MemorySegment buffer, long count, DataType type, int peer) {
        blocking("recv");
        recvAsync(buffer, count, type, peer).await();
    }

    // ------------------------------------------------------------------ on a CUDA stream

    /*
     * The collectives on device buffers, as NCCL's: each call queues its work on {@code stream} and
     * returns; the results are there once the stream has run that far ({@code stream.synchronize()},
     * or wait on {@code stream.record()}). Work queued on the stream before the call is done before
     * the collective reads its input; work queued after it starts after its output is written.
     * Buffers must be device memory (a mix with host memory is refused). A failure (a dead peer)
     * still lets the stream go on, with the output not written: asyncError() reports it, and the
     * communicator's next call throws it. Where every rank is on this host with a GPU of its own, the
     * collectives but all-to-all run GPU to GPU (a kernel writing into the next GPU's memory, see
     * {@link io.jccl.core.device.PeerRing}); through the network, the same kernels fill and drain
     * slots of pinned host memory that a proxy moves (NCCL's FIFO, {@link io.jccl.core.device.NetFifo});
     * otherwise (all-to-all, send/recv, JCCL_NET_FIFO=0, calls inside a group) the whole buffer is
     * staged through pinned host memory. Inside a {@link Group}, a communicator's stream-ordered calls
     * (all on one stream) run as one operation, every send and receive in flight at once.
     */

    /** {@link #allReduceAsync} on device buffers, queued on {@code stream}. */
    public void allReduce(MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op,
                          CudaStream stream) {
        long bytes = bytes(count, type);
        checkDeviceBuffers(stream, "sendbuff", send, bytes, "recvbuff", recv, bytes);
        if (onPeerRing(stream, "allReduce", type, op, p -> p.allReduce(send, recv, count, type, op, stream))) {
            return;
        }
        ReductionKernel k = stagingKernel(type, op);
        onStream(stream, "allReduce", call -> {
            MemorySegment stage = call.staging(bytes);
            call.copyIn(stage, send.asSlice(0, bytes));
            call.copyOut(recv.asSlice(0, bytes), stage);
            return b -> b.allReduce(stage, stage, count, type, op, k);
        });
    }

    /** {@link #broadcastAsync} on device buffers, queued on {@code stream}. */
    public void broadcast(MemorySegment send, MemorySegment recv, long count, DataType type, int root,
                          CudaStream stream) {
        long bytes = bytes(count, type);
        checkRoot(root);
        checkDeviceBuffers(stream, "sendbuff", send, rank == root ? bytes : 0, "recvbuff", recv, bytes);
        if (onPeerRing(stream, "broadcast", null, null, p -> p.broadcast(send, recv, count, type, root, stream))) {
            return;
        }
        ReductionKernel k = stagingKernel(type, null);
        onStream(stream, "broadcast", call -> {
            MemorySegment stage = call.staging(bytes);
            if (rank == root) {
                call.copyIn(stage, send.asSlice(0, bytes));
            }
            call.copyOut(recv.asSlice(0, bytes), stage);
            return b -> b.broadcast(stage, stage, count, type, root, k);
        });
    }

    /** {@link #reduceAsync} on device buffers, queued on {@code stream}. */
    public void reduce(MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op, int root,
                       CudaStream stream) {
        long bytes = bytes(count, type);
        checkRoot(root);
        checkDeviceBuffers(stream, "sendbuff", send, bytes, "recvbuff", recv, rank == root ? bytes : 0);
        if (onPeerRing(stream, "reduce", type, op, p -> p.reduce(send, recv, count, type, op, root, stream))) {
            return;
        }
        ReductionKernel k = stagingKernel(type, op);
        onStream(stream, "reduce", call -> {
            MemorySegment stage = call.staging(bytes);
            call.copyIn(stage, send.asSlice(0, bytes));
            if (rank == root) {
                call.copyOut(recv.asSlice(0, bytes), stage);
            }
            return b -> b.reduce(stage, stage, count, type, op, root, k);
        });
    }

    /** {@link #allGatherAsync} on device buffers, queued on {@code stream}. */
    public void allGather(MemorySegment send, MemorySegment recv, long sendCount, DataType type, CudaStream stream) {
        long bytes = bytes(sendCount, type);
        long total = Math.multiplyExact(bytes, nranks);
        checkDeviceBuffers(stream, "sendbuff", send, bytes, "recvbuff", recv, total);
        if (onPeerRing(stream, "allGather", null, null, p -> p.allGather(send, recv, sendCount, type, stream))) {
            return;
        }
        ReductionKernel k = stagingKernel(type, null);
        onStream(stream, "allGather", call -> {
            MemorySegment stage = call.staging(total);
            MemorySegment mine = stage.asSlice(rank * bytes, bytes);
            call.copyIn(mine, send.asSlice(0, bytes));
            call.copyOut(recv.asSlice(0, total), stage);
            return b -> b.allGather(mine, stage, sendCount, type, k);
        });
    }

    /** {@link #reduceScatterAsync} on device buffers, queued on {@code stream}. */
    public void reduceScatter(MemorySegment send, MemorySegment recv, long recvCount, DataType type, ReduceOp op,
                              CudaStream stream) {
        long bytes = bytes(recvCount, type);
        long total = Math.multiplyExact(bytes, nranks);
        checkDeviceBuffers(stream, "sendbuff", send, total, "recvbuff", recv, bytes);
        if (onPeerRing(stream, "reduceScatter", type, op, p -> p.reduceScatter(send, recv, recvCount, type, op, stream))) {
            return;
        }
        ReductionKernel k = stagingKernel(type, op);
        onStream(stream, "reduceScatter", call -> {
            MemorySegment stage = call.staging(total);
            MemorySegment mine = stage.asSlice(rank * bytes, bytes);
            call.copyIn(stage, send.asSlice(0, total));
            call.copyOut(recv.asSlice(0, bytes), mine);
            return b -> b.reduceScatter(stage, mine, recvCount, type, op, k);
        });
    }

    /** {@link #allToAllAsync} on device buffers, queued on {@code stream}. */
    public void allToAll(MemorySegment send, MemorySegment recv, long count, DataType type, CudaStream stream) {
        long bytes = bytes(count, type);
        long total = Math.multiplyExact(bytes, nranks);
        checkDeviceBuffers(stream, "sendbuff", send, total, "recvbuff", recv, total);
        stagingKernel(type, null);
        onStream(stream, "allToAll", call -> {
            MemorySegment in = call.staging(total);
            MemorySegment out = call.staging(total);
            call.copyIn(in, send.asSlice(0, total));
            call.copyOut(recv.asSlice(0, total), out);
            return b -> b.allToAll(in, out, bytes);
        });
    }

    /** {@link #sendAsync} of a device buffer, queued on {@code stream}. */
    public void send(MemorySegment buffer, long count, DataType type, int peer, CudaStream stream) {
        long bytes = bytes(count, type);
        checkPeer(peer);
        checkDeviceBuffers(stream, "sendbuff", buffer, bytes, null, null, 0);
        onStream(stream, "send", call -> {
            MemorySegment stage = call.staging(bytes);
            call.copyIn(stage, buffer.asSlice(0, bytes));
            return b -> b.send(peer, new Transfer(stage, 0, bytes));
        });
    }

    /** {@link #recvAsync} into a device buffer, queued on {@code stream}. */
    public void recv(MemorySegment buffer, long count, DataType type, int peer, CudaStream stream) {
        long bytes = bytes(count, type);
        checkPeer(peer);
        checkDeviceBuffers(stream, "recvbuff", buffer, bytes, null, null, 0);
        onStream(stream, "recv", call -> {
            MemorySegment stage = call.staging(bytes);
            call.copyOut(buffer.asSlice(0, bytes), stage);
            return b -> b.recv(peer, new Transfer(stage, 0, bytes));
        });
    }

    /**
     * Queues {@code call} on the P2P ring when there is one (every rank on this host, a GPU each) and
     * it has the kernel ({@code type} and {@code op} null: a collective that only moves bytes).
     *
     * @return whether it did; otherwise the staged path runs the collective
     */
    private boolean onPeerRing(CudaStream stream, String what, DataType type, ReduceOp op, Consumer<PeerRing> call) {
        if (Group.isActive()) {
            return false; // a group's calls progress together in one operation of the staged path
        }
        PeerRing p = peerRingFor(stream);
        if (p == null || !p.supports(type == null ? DataType.UINT8 : type, op == null ? ReduceOp.SUM : op)) {
            return false;
        }
        checkUsable();
        try {
            call.accept(p);
        } catch (CudaException e) {
            throw new JcclException(NetResult.UNHANDLED_CUDA_ERROR, JcclException.NO_RANK, what + ": " + e.getMessage(), e);
        }
        return true;
    }

    /** Stages one stream-ordered operation, submits it gated on its stream, and queues the hand-over. */
    private void onStream(CudaStream stream, String what, Function<StagedCall, Consumer<OperationBuilder>> stage) {
        checkUsable();
        if (Group.isActive()) {
            onStreamInGroup(stream, what, stage);
            return;
        }
        StreamBridge b = bridgeFor(stream);
        StagedCall call = b.begin(stream, what + " (rank " + rank + ")");
        try {
            Consumer<OperationBuilder> build = stage.apply(call);
            OperationBuilder builder = newBuilder();
            build.accept(builder);
            Operation op = new Operation(what);
            op.setGate(call);
            launch(builder, op);
        } catch (RuntimeException e) {
            call.cancel();
            throw e instanceof CudaException c ? new JcclException(NetResult.UNHANDLED_CUDA_ERROR, JcclException.NO_RANK, what + ": "
                    + c.getMessage(), c) : e;
        }
        call.enqueue();
    }

    /**
     * A stream-ordered operation inside a group: its buffers join the group's one staged call on
     * {@code stream} (copies in queued now), its transfers the group's operation, handed to the proxy
     * when the group ends.
     */
    private void onStreamInGroup(CudaStream stream, String what, Function<StagedCall, Consumer<OperationBuilder>> stage) {
        PendingGroup g = Group.pendingFor(this);
        StagedCall call = g.acceptStreamOperation(rank, stream, () -> bridgeFor(stream).begin(stream, "group (rank " + rank + ")"));
        Consumer<OperationBuilder> build;
        try {
            build = stage.apply(call);
        } catch (CudaException e) {
            throw new JcclException(NetResult.UNHANDLED_CUDA_ERROR, JcclException.NO_RANK, what + ": " + e.getMessage(), e);
        }
        build.accept(g.builder);
    }

    /**
     * The P2P ring for device collectives, set up by the first one (every rank makes the same first
     * device collective); null where the ranks are not all on this host, or a rank
     * cannot take part (the reason is logged once).
     */
    private PeerRing peerRingFor(CudaStream stream) {
        if (stream == null) {
            throw JcclException.invalidArgument("stream must not be null");
        }
        synchronized (submitLock) {
            if (!peerRingDecided) {
                peerRingDecided = true;
                if (nranks > 1 && allRanksShareHostId()) {
                    checkUsable();
                    PeerRing.Setup s;
                    try {
                        s = PeerRing.connect(rank, nranks, stream.device(), bootstrap::allGather,
                                config.peerToPeer() ? null : CoreConfig.NCCL_P2P_DISABLE + "=1", config.peerToPeerSharedGpu(),
                                config.timeout().toNanos());
                    } catch (CudaException e) {
                        throw new JcclException(NetResult.UNHANDLED_CUDA_ERROR, JcclException.NO_RANK, "cannot map "
                                + "the other GPUs' memory (CUDA IPC): " + e.getMessage(), e);
                    }
                    peerRing = s.ring();
                    if (s.ring() != null) {
                        log.info(LogSubsystem.INIT, "rank %d: collectives on device buffers through P2P/IPC: each GPU writes "
                                + "into the next's memory (%s)", rank, stream.device());
                    } else {
                        log.info(LogSubsystem.INIT, "rank %d: no P2P between GPUs (%s): device collectives go through "
                                + "pinned host staging", rank, s.why());
                    }
                }
                // The network FIFO where the host engine would use the network too: ranks on other
                // hosts, or on this one with shared memory off (NCCL_SHM_DISABLE=1) and no P2P ring.
                if (peerRing == null && nranks > 1 && (!allRanksShareHostId() || !config.sharedMemory())) {
                    checkUsable();
                    PeerRing.Setup s;
                    boolean gpuDirect = config.netGpuDirect() && transportMovesGpuMemory();
                    try {
                        s = PeerRing.overNetwork(rank, nranks, stream.device(), bootstrap::allGather,
                                config.netFifo() ? null : CoreConfig.JCCL_NET_FIFO + "=0", channels,
                                config.timeout().toNanos(), gpuDirect, this::connectDeviceRing);
                    } catch (CudaException e) {
                        throw new JcclException(NetResult.UNHANDLED_CUDA_ERROR, JcclException.NO_RANK, "cannot set up "
                                + "the network FIFO of device collectives: " + e.getMessage(), e);
                    }
                    peerRing = s.ring();
                    if (s.ring() != null) {
                        log.info(LogSubsystem.INIT, "rank %d: collectives on device buffers through the network FIFO: "
                                + "kernels on %s fill and drain %s, a proxy moves them (%s)", rank, stream.device(),
                                gpuDirect ? "slots in GPU memory that " + net.name() + " reads and writes (GPUDirect)"
                                        : "pinned host slots", s.ring().connections());
                        if (config.netGpuDirect() && !gpuDirect) {
                            log.info(LogSubsystem.INIT, "rank %d: %s=1, but %s does not move GPU memory (ptrSupport "
                                    + "without CUDA): the network FIFO's slots stay in pinned host memory", rank,
                                    CoreConfig.JCCL_NET_GDR, net.name());
                        }
                    } else {
                        log.info(LogSubsystem.INIT, "rank %d: no network FIFO for device collectives (%s): they go "
                                + "through whole-buffer pinned host staging", rank, s.why());
                    }
                }
            }
            PeerRing p = peerRing;
            if (p != null && p.device().ordinal() != stream.device().ordinal()) {
                throw JcclException.invalidArgument("this communicator's device buffers are on GPU "
                        + p.device().ordinal() + "; the stream is of GPU " + stream.device().ordinal());
            }
            return p;
        }
    }

    private boolean allRanksShareHostId() {
        for (String h : hostIds) {
            if (!h.equals(hostIds[rank])) {
                return false;
            }
        }
        return true;
    }

    private StreamBridge bridgeFor(CudaStream stream) {
        if (stream == null) {
            throw JcclException.invalidArgument("stream must not be null");
        }
        synchronized (submitLock) {
            StreamBridge b = bridge;
            if (b == null) {
                try {
                    b = new StreamBridge(stream.device());
                } catch (CudaException e) {
                    throw new JcclException(NetResult.UNHANDLED_CUDA_ERROR, JcclException.NO_RANK, "cannot set up stream-ordered "
                            + "collectives on " + stream.device() + ": " + e.getMessage(), e);
                }
                bridge = b;
                log.info(LogSubsystem.INIT, "rank %d: collectives on device buffers of %s, through pinned host staging",
                        rank, stream.device());
            } else if (b.device().ordinal() != stream.device().ordinal()) {
                throw JcclException.invalidArgument("this communicator's device buffers are on GPU "
                        + b.device().ordinal() + "; the stream is of GPU " + stream.device().ordinal());
            }
            return b;
        }
    }

    private void checkDeviceBuffers(CudaStream stream, String name, MemorySegment a, long aBytes, String otherName,
                                    MemorySegment b, long bBytes) {
        if (stream == null) {
            throw JcclException.invalidArgument("stream must not be null");
        }
        checkDeviceBuffer(name, a, aBytes);
        if (otherName != null) {
            checkDeviceBuffer(otherName, b, bBytes);
        }
    }

    private static void checkDeviceBuffer(String name, MemorySegment buffer, long bytes) {
        if (buffer == null) {
            if (bytes == 0) {
                return;
            }
            throw JcclException.invalidArgument(name + " must not be null");
        }
        if (buffer.byteSize() < bytes) {
            throw JcclException.invalidArgument(name + " holds " + buffer.byteSize() + " bytes; the call needs " + bytes);
        }
        if (bytes > 0 && MemoryKind.of(buffer) != MemoryKind.CUDA) {
            throw JcclException.invalidArgument(name + " is host memory: a collective on a CUDA stream takes device "
                    + "buffers (call the method without a stream for host buffers)");
        }
    }

    /** @return the host kernel that reduces the staged data, after checking it can do {@code op} on {@code type} */
    private static ReductionKernel stagingKernel(DataType type, ReduceOp op) {
        ReductionKernel k = MemoryKind.HOST.kernel();
        if (op != null && !k.supports(type, op)) {
            throw JcclException.invalidArgument(op.ncclName() + " on " + type.ncclName() + " is not supported on "
                    + "device buffers by this version (staged through host memory, and 8-bit floating-point "
                    + "reductions run on the GPU only)");
        }
        return k;
    }

    // ------------------------------------------------------------------ issuing

    /**
     * @return whether a collective that publishes {@code bytes} per rank runs on the calling
     *         thread (the LL protocol); decided alike on every rank from the call's arguments
     */
    private boolean small(long bytes) {
        return lowLatency != null && lowLatency.accepts(bytes) && !Group.isActive();
    }

    /** {@link #small} for an all-reduce, which a board also takes beyond the LL threshold ({@code JCCL_BOARD_ALLREDUCE}). */
    private boolean smallAllReduce(long bytes) {
        return lowLatency != null && lowLatency.acceptsAllReduce(bytes) && !Group.isActive();
    }

    /**
     * Before a small call: the operations handed to the proxy earlier end first (calls of one
     * communicator take effect in order).
     *
     * @return the call's operation number
     */
    private long enterSmall() {
        checkUsable();
        Operation last = lastLaunched;
        if (last != null && !last.isDone()) {
            last.await();
        }
        synchronized (submitLock) {
            issued = ++sequence;
            return sequence;
        }
    }

    /** A small call failed: so does the communicator, as when an operation of the proxy fails. */
    private JcclException failedSmall(JcclException e) {
        failed(e);
        return e;
    }

    PendingGroup newPendingGroup() {
        checkUsable();
        return new PendingGroup(this, newBuilder());
    }

    private Completion issue(Consumer<OperationBuilder> call) {
        checkUsable();
        if (Group.isActive()) {
            PendingGroup g = Group.pendingFor(this);
            g.acceptHostOperation(rank);
            call.accept(g.builder);
            return g.operation;
        }
        OperationBuilder b = newBuilder();
        call.accept(b);
        Operation op = new Operation("operation");
        launch(b, op);
        return op;
    }

    /** Sets up the connections a group's sends and receives need, builds its tasks and submits it. */
    void launch(OperationBuilder builder, Operation op) {
        checkUsable();
        ReductionKernel kernel = MemoryKind.HOST.kernel();
        connectPeers(builder.sendPeers(), builder.recvPeers());
        builder.stageOverlappingSends(bytes -> overlapStaging.take(bytes, op));
        op.setTasks(builder.name(), builder.build(p -> p2pSend[p], p -> p2pRecv[p], kernel));
        synchronized (submitLock) {
            op.setEvent(Events.beginCollective(builder.name(), builder.bytes(), builder.algorithm(), rank, nranks,
                    sequence + 1));
            op.markSubmitted(++sequence);
            issued = sequence;
            lastLaunched = op;
            proxy.submit(op);
        }
    }

    /** Connects to the peers not yet connected, in one set-up so that both directions progress together. */
    private void connectPeers(List<Integer> sendTo, List<Integer> recvFrom) {
        List<ConnectionSetup.Request> requests = new ArrayList<>();
        synchronized (p2pSend) {
            for (int p : recvFrom) {
                if (p2pRecv[p] == null) {
                    requests.add(new ConnectionSetup.Request(p, false, 0, p2pStepBytes, P2P_TAG,
                            "p2p recv from rank " + p, onThisHost(p)));
                }
            }
            for (int p : sendTo) {
                if (p2pSend[p] == null) {
                    requests.add(new ConnectionSetup.Request(p, true, 0, p2pStepBytes, P2P_TAG, "p2p send to rank " + p,
                            onThisHost(p)));
                }
            }
            if (requests.isEmpty()) {
                return;
            }
            List<Connection> made = establishOrFail(requests);
            for (Connection c : made) {
                if (c instanceof SendConnection s) {
                    p2pSend[s.peer] = s;
                } else {
                    p2pRecv[c.peer] = (RecvConnection) c;
                }
            }
            proxy.addConnections(made);
        }
    }

    // ------------------------------------------------------------------ checks

    private void checkUsable() {
        checkPeerRing();
        JcclException f = failure;
        if (f != null) {
            throw new JcclException(f.result(), f.failedRank(), "the communicator failed earlier: " + f.getMessage(), f);
        }
        if (state != OPEN) {
            throw JcclException.invalidUsage("the communicator of rank " + rank + " is closed");
        }
    }

    /** A P2P ring kernel that stopped early (a neighbour made no progress) fails the communicator. */
    private void checkPeerRing() {
        PeerRing p = peerRing;
        String why = p == null || failure != null ? null : p.failure();
        if (why != null) {
            failed(new JcclException(NetResult.REMOTE_ERROR, JcclException.NO_RANK, "rank " + rank + ": " + why, null));
        }
    }

    private void blocking(String what) {
        if (Group.isActive()) {
            throw JcclException.invalidUsage("blocking " + what + " inside a group would wait for the group's end: "
                    + "use " + what + "Async and wait after the group");
        }
    }

    private static long bytes(long count, DataType type) {
        if (type == null) {
            throw JcclException.invalidArgument("datatype must not be null");
        }
        if (count < 0) {
            throw JcclException.invalidArgument("count must not be negative, got " + count);
        }
        try {
            return Math.multiplyExact(count, type.size());
        } catch (ArithmeticException e) {
            throw JcclException.invalidArgument("count " + count + " of " + type.ncclName() + " overflows");
        }
    }

    private void checkBuffer(String name, MemorySegment buffer, long bytes) {
        if (buffer == null) {
            if (bytes == 0) {
                return;
            }
            throw JcclException.invalidArgument(name + " must not be null");
        }
        if (buffer.byteSize() < bytes) {
            throw JcclException.invalidArgument(name + " holds " + buffer.byteSize() + " bytes; the call needs " + bytes);
        }
        if (buffer.isReadOnly() && name.startsWith("recv")) {
            throw JcclException.invalidArgument(name + " is read-only");
        }
        if (!buffer.isAccessibleBy(proxy.thread())) {
            throw JcclException.invalidArgument(name + " belongs to a confined arena: allocate buffers from a shared, "
                    + "global or automatic arena, so that the communicator's proxy thread can use them");
        }
    }

    private void checkRoot(int root) {
        if (root < 0 || root >= nranks) {
            throw JcclException.invalidArgument("root " + root + " is outside 0.." + (nranks - 1));
        }
    }

    private void checkPeer(int peer) {
        if (peer < 0 || peer >= nranks) {
            throw JcclException.invalidArgument("peer " + peer + " is outside 0.." + (nranks - 1));
        }
    }

    /** @return the kernel for these buffers, after checking that it can do {@code op} on {@code type} */
    private ReductionKernel kernel(DataType type, ReduceOp op, MemorySegment a, MemorySegment b) {
        MemoryKind kind = MemoryKind.of(a != null ? a : b);
        MemoryKind other = a != null && b != null && b != a ? MemoryKind.of(b) : kind;
        if (other != kind) {
            throw JcclException.invalidArgument("the send buffer is " + kind + " memory and the receive buffer "
                    + other + " memory: both must be host memory, or both device memory");
        }
        ReductionKernel k;
        try {
            k = kind.kernel();
        } catch (UnsupportedOperationException | IllegalArgumentException e) { // device memory; a bad JCCL_HOST_KERNEL
            throw JcclException.invalidArgument(e.getMessage());
        }
        if (op != null && !k.supports(type, op)) {
            throw JcclException.invalidArgument(op.ncclName() + " on " + type.ncclName()
                    + " is not supported on host memory (8-bit floating-point arithmetic needs a GPU)");
        }
        return k;
    }

    // ------------------------------------------------------------------ failure and teardown

    /** A timeout: the ranks that have not issued the stuck operation are to blame, if any. */
    private JcclException diagnoseTimeout(Operation op, int blockingPeer, String localReason) {
        return diagnose(op.sequence(), op.describe(), blockingPeer, localReason);
    }

    /**
     * A timeout of operation {@code sequence} (described as {@code operation}): the ranks that
     * have not issued it are to blame, if any.
     */
    private JcclException diagnose(long sequence, String operation, int blockingPeer, String localReason) {
        long[] answers = bootstrap.queryStatus(Math.min(2_000, config.timeout().toMillis()));
        List<String> behind = new ArrayList<>();
        List<String> silent = new ArrayList<>();
        int blame = -1;
        for (int r = 0; r < nranks; r++) {
            if (r == rank) {
                continue;
            }
            if (answers[r] < 0) {
                silent.add(bootstrap.describe(r));
            } else if (answers[r] < sequence) {
                behind.add(bootstrap.describe(r) + " is at #" + answers[r]);
                if (blame < 0) {
                    blame = r;
                }
            }
        }
        String why;
        if (!behind.isEmpty()) {
            why = operation + " timed out: not every rank has issued it (" + String.join(", ", behind) + "); "
                    + "this rank " + localReason.substring(localReason.indexOf("made no progress"));
        } else {
            blame = blockingPeer;
            why = localReason + (silent.isEmpty() ? "; every rank has issued it"
                    : "; no answer from " + String.join(", ", silent));
        }
        return new JcclException(NetResult.TIMEOUT, blame, why);
    }

    /** A failure seen by the proxy, a connection set-up or the bootstrap: the communicator is done. */
    private void failed(JcclException cause) {
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = cause;
        }
        Proxy p = proxy;
        if (p != null) {
            p.fail(cause);
        }
        PeerRing ring = peerRing;
        if (ring != null) {
            ring.abort();
        }
        Bootstrap b = bootstrap;
        if (b != null) {
            b.fail(cause);
        }
    }

    /**
     * NCCL's {@code ncclCommDestroy}: waits for the operations in flight (within the timeout),
     * leaves together with the other ranks, and releases everything. On a failed communicator it
     * behaves as {@link #abort()}.
     *
     * @throws JcclException if operations still in flight failed (everything is released anyway)
     */
    @Override
    public void close() {
        synchronized (this) {
            if (state != OPEN) {
                return;
            }
            state = CLOSING;
        }
        CommunicatorEvent event = Events.beginCommunicator("close", rank, nranks);
        JcclException problem = null;
        if (failure == null) {
            bootstrap.beginClose();
            Operation drain = new Operation("close", new DrainTask(proxy.connections()));
            synchronized (submitLock) {
                drain.markSubmitted(++sequence);
                proxy.submit(drain);
            }
            try {
                drain.await();
                PeerRing ring = peerRing;
                if (ring != null && !ring.awaitLastKernel(config.timeout().toNanos())) {
                    throw new JcclException(NetResult.REMOTE_ERROR, JcclException.NO_RANK, "rank " + rank
                            + ": the last all-reduce kernel of the P2P ring did not end", null);
                }
                bootstrap.barrier();
            } catch (JcclException e) {
                problem = e;
                failed(e);
            }
        }
        release(problem == null && failure == null);
        state = CLOSED;
        Events.end(event, net.name(), channels, problem != null ? problem.getMessage() : failure != null
                ? "after a failure: " + failure.getMessage() : "graceful");
        if (problem != null) {
            throw problem;
        }
    }

    /**
     * NCCL's {@code ncclCommAbort}: fails every pending operation, tells the other ranks, and
     * releases the communicator. Returns within a few seconds whatever the state, even while an
     * operation is stuck; never throws.
     */
    public void abort() {
        synchronized (this) {
            if (state == CLOSED) {
                return;
            }
            state = CLOSING;
        }
        CommunicatorEvent event = Events.beginCommunicator("abort", rank, nranks);
        failed(new JcclException(NetResult.REMOTE_ERROR, rank, "rank " + rank + " aborted the communicator", null));
        release(false);
        state = CLOSED;
        JcclException f = failure;
        Events.end(event, net.name(), channels, f == null ? "" : f.getMessage());
    }

    private void release(boolean graceful) {
        boolean smallDone = lowLatency == null || lowLatency.close(TimeUnit.SECONDS.toNanos(2));
        if (!smallDone) {
            log.warn("rank %d: a small collective did not end; its connections are left open", rank);
        }
        boolean stopped = proxy.stop(TimeUnit.SECONDS.toNanos(2));
        if (stopped) {
            for (Connection c : proxy.connections()) {
                c.close();
            }
        } else {
            log.warn("rank %d: the proxy thread did not stop; its connections are left open", rank);
        }
        bootstrap.close(graceful);
        CollNetSetup.close(collNet);
        closePlugin();
        PeerRing ring = peerRing;
        if (ring != null) {
            ring.close();
        }
        StreamBridge b = bridge;
        if (b != null && !b.close(TimeUnit.SECONDS.toNanos(10))) {
            log.warn("rank %d: CUDA streams still queued behind this communicator's operations after 10 s; their "
                    + "pinned staging is left allocated", rank);
        }
        if (stopped && smallDone) {
            arena.close();
        }
        log.info(LogSubsystem.INIT, "comm rank %d nranks %d - %s", rank, nranks, graceful ? "Destroy COMPLETE"
                : "Abort COMPLETE");
    }

    private void closePlugin() {
        try {
            net.close();
        } catch (NetException | RuntimeException e) {
            log.warn("rank %d: closing %s: %s", rank, net.name(), e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "Communicator[rank " + rank + " of " + nranks + " via " + net.name() + (failure != null ? ", failed"
                : state != OPEN ? ", closed" : "") + "]";
    }
}
