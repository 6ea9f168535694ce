package io.jccl.core.device;

import io.jccl.core.kernel.CudaReductionKernel;
import io.jccl.core.transport.Connection;
import io.jccl.cuda.Cuda;
import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.CudaEvent;
import io.jccl.cuda.CudaFunction;
import io.jccl.cuda.CudaModule;
import io.jccl.cuda.CudaStream;
import io.jccl.cuda.DeviceBuffer;
import io.jccl.cuda.Nvrtc;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Collectives on device buffers run by GPU kernels (all-reduce, reduce-scatter, all-gather,
 * broadcast, reduce). Between GPUs of one host without the host ({@link #connect}): a ring in which each
 * rank's kernel writes its chunks straight into the next GPU's memory (CUDA IPC between processes,
 * peer access between threads of one process), over NVLink or PCIe, with NCCL's FIFO protocol
 * (see {@code ring.cu}: slots, a tail counter the writer advances, a head counter the reader
 * advances). The call queues one kernel on the caller's stream and returns; the proxy thread is
 * not involved.
 *
 * <p>Set up once per communicator by {@link #connect}, a collective: every rank exports a region of
 * its GPU's memory, the ranks exchange handles and agree, and each maps its two ring neighbours'.
 * Used when every rank is on one host, each on its own GPU, each GPU can reach its neighbours'
 * (cuDeviceCanAccessPeer), and {@code NCCL_P2P_DISABLE} is not set; otherwise the staged path
 * ({@link StreamBridge}) carries device collectives.
 *
 * <p>Through the network ({@link #overNetwork}): the same kernel, whose neighbours' memory is then
 * pinned host memory of this rank that a proxy thread moves through the network transport, slot by
 * slot ({@link NetFifo}: NCCL's kernel-and-proxy FIFO). The call queues the kernel and tells the proxy
 * how many slots it will receive.
 *
 * <p>Failure: every wait of the kernel ends when the communicator fails ({@link #abort}: the host
 * writes a word the kernels poll) or after the communicator's timeout without progress (the kernel
 * writes why); the output is then incomplete and {@link #failure()} says so.
 */
public final class PeerRing implements AutoCloseable {
    /** Slots of each channel's FIFO (NCCL's NCCL_STEPS). */
    static final int SLOTS = 8;
    static final int SLOT_BYTES = 256 << 10;
    static final int CHANNEL_STRIDE = 256;
    static final int FIFO_OFFSET = 64 << 10;
    /** Channels (blocks) at most; each has its own FIFO and counters. */
    public static final int MAX_CHANNELS = 32;
    /** A channel per this many bytes of a call, up to {@link #MAX_CHANNELS}. */
    static final long BYTES_PER_CHANNEL = 128 << 10;
    static final int THREADS = 512;
    static final long REGION_BYTES = FIFO_OFFSET + (long) MAX_CHANNELS * SLOTS * SLOT_BYTES;

    /** How a rank reaches the others: what it sends at set-up. */
    record Card(boolean willing, String why, long pid, String pciBusId, boolean sharesGpu, long address, byte[] handle) {
        byte[] toBytes() {
            try {
                ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                DataOutputStream out = new DataOutputStream(bytes);
                out.writeBoolean(willing);
                out.writeUTF(why);
                out.writeLong(pid);
                out.writeUTF(pciBusId);
                out.writeBoolean(sharesGpu);
                out.writeLong(address);
                out.writeInt(handle.length);
                out.write(handle);
                return bytes.toByteArray();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        static Card fromBytes(byte[] b) {
            try {
                DataInputStream in = new DataInputStream(new ByteArrayInputStream(b));
                boolean willing = in.readBoolean();
                String why = in.readUTF();
                long pid = in.readLong();
                String pci = in.readUTF();
                boolean shares = in.readBoolean();
                long address = in.readLong();
                byte[] handle = new byte[in.readInt()];
                in.readFully(handle);
                return new Card(willing, why, pid, pci, shares, address, handle);
            } catch (IOException e) {
                throw new UncheckedIOException("a peer's P2P card is malformed", e);
            }
        }

        static Card unwilling(String why) {
            return new Card(false, why, ProcessHandle.current().pid(), "", false, 0, new byte[0]);
        }
    }

    /** The outcome of {@link #connect}: the ring, or why there is none (the same on every rank). */
    public record Setup(PeerRing ring, String why) {
    }

    /**
     * Loaded kernels by GPU, type and operation, shared by the rings of a process and kept for its
     * life: ranks that are threads on one GPU share its context, where loading a module waits for the
     * kernels running in it, and a rank's kernel waits for the others' calls, so a rank that loaded
     * while another's kernel waited for it would never get there.
     */
    private static final Map<String, CudaModule> MODULES = new HashMap<>();

    private final CudaDevice device;
    private final int rank;
    private final int nranks;
    private final DeviceBuffer region;
    /** Neighbours' regions mapped through IPC (null where the neighbour is this process). */
    private final DeviceBuffer nextMapping;
    private final DeviceBuffer prevMapping;
    private final long nextAddress;
    private final long prevAddress;
    /** Pinned host words: [0] stop (host or kernel sets it), [1] why (1: a kernel timed out). */
    private final DeviceBuffer control;
    private final long timeoutNanos;
    private final String arch;
    private final Map<DataType, Map<ReduceOp, CudaFunction>> kernels = new EnumMap<>(DataType.class);
    private final Map<DataType, CudaFunction> divisions = new EnumMap<>(DataType.class);
    /** Through the network: the proxy that moves this rank's FIFO slots (null for the P2P ring). */
    private NetFifo fifo;
    /** The outbox region of the network ring (the kernel's next and previous rank), or null. */
    private DeviceBuffer outbox;
    /** The network ring's slots in GPU memory (GPUDirect: received into, sent from), or null. */
    private DeviceBuffer deviceRecvSlots;
    private DeviceBuffer deviceSendSlots;
    /** Where the kernel reads its received slots and writes the ones it sends. */
    private long recvFifoAddress;
    private long sendFifoAddress;
    /** Blocks a call runs on at most: {@link #MAX_CHANNELS}, or the network ring's connections. */
    private int maxChannels = MAX_CHANNELS;
    private CudaEvent last;
    private boolean closed;

    private PeerRing(CudaDevice device, int rank, int nranks, DeviceBuffer region, DeviceBuffer nextMapping,
                     DeviceBuffer prevMapping, long nextAddress, long prevAddress, DeviceBuffer control,
                     long timeoutNanos) {
        this.device = device;
        this.rank = rank;
        this.nranks = nranks;
        this.region = region;
        this.nextMapping = nextMapping;
        this.prevMapping = prevMapping;
        this.nextAddress = nextAddress;
        this.prevAddress = prevAddress;
        this.control = control;
        this.timeoutNanos = timeoutNanos;
        this.arch = "--gpu-architecture=compute_" + device.computeCapability().replace(".", "");
        this.recvFifoAddress = region.segment().address() + FIFO_OFFSET;
        this.sendFifoAddress = nextAddress + FIFO_OFFSET;
    }

    /**
     * Sets up the ring; every rank of the communicator calls it, at the same point of its calls.
     *
     * @param allGather   the communicator's all-gather of one byte array per rank (the bootstrap's)
     * @param disabled    why this rank will not take part ({@code NCCL_P2P_DISABLE}), or null
     * @param sharesGpu   whether this rank accepts other ranks on its GPU in the ring
     *                    ({@code JCCL_P2P_SHARED_GPU}): their kernels must then run at the same time on
     *                    that GPU, which holds for threads of one process, and for processes under CUDA
     *                    MPS, while nothing else fills the GPU
     * @param timeoutNanos bound on a kernel's wait for a neighbour
     * @return the ring, or null and why not: the same outcome on every rank
     */
    public static Setup connect(int rank, int nranks, CudaDevice device, Function<byte[], byte[][]> allGather,
                                String disabled, boolean sharesGpu, long timeoutNanos) {
        // First round: who takes part, on which GPU. What it decides, every rank decides alike, before
        // any memory is allocated (ranks that are threads sharing a GPU allocate nothing here).
        Card mine;
        if (disabled != null) {
            mine = Card.unwilling(disabled);
        } else if (!Nvrtc.isAvailable()) {
            mine = Card.unwilling("NVRTC is unavailable: " + Nvrtc.unavailabilityCause().getMessage());
        } else {
            mine = new Card(true, "", ProcessHandle.current().pid(), device.pciBusId(), sharesGpu, 0, new byte[0]);
        }
        Card[] cards = cards(allGather.apply(mine.toBytes()), nranks);
        String why = sharedVerdict(cards);
        if (why != null) {
            return new Setup(null, why);
        }
        // Second round: each rank exports its region, or says why it cannot reach its neighbours.
        int next = (rank + 1) % nranks;
        int prev = (rank + nranks - 1) % nranks;
        DeviceBuffer region = null;
        DeviceBuffer control = null;
        String problem = reachable(cards, device, next, prev);
        if (problem == null) {
            try {
                region = device.allocate(REGION_BYTES);
                device.fill(region.segment(), (byte) 0); // counters start at 0 before any peer sees the region
                control = device.allocatePinnedHost(8);
                control.segment().fill((byte) 0);
                mine = new Card(true, "", mine.pid, mine.pciBusId, sharesGpu, region.segment().address(),
                        region.ipcHandle());
            } catch (RuntimeException e) {
                problem = "cannot export GPU memory: " + e.getMessage();
            }
        }
        if (problem != null) {
            mine = Card.unwilling(problem);
        }
        cards = cards(allGather.apply(mine.toBytes()), nranks);
        for (int r = 0; r < nranks && why == null; r++) {
            if (!cards[r].willing) {
                why = "rank " + r + ": " + cards[r].why;
            }
        }
        if (why != null) {
            close(region);
            close(control);
            return new Setup(null, why);
        }
        DeviceBuffer nextMapping = null;
        DeviceBuffer prevMapping = null;
        try {
            long myPid = ProcessHandle.current().pid();
            long nextAddress;
            long prevAddress;
            if (cards[next].pid == myPid) {
                device.enablePeerAccess(deviceOf(cards[next].pciBusId));
                nextAddress = cards[next].address;
            } else {
                nextMapping = device.openIpc(cards[next].handle, REGION_BYTES);
                nextAddress = nextMapping.segment().address();
            }
            if (prev == next) {
                prevAddress = nextAddress;
            } else if (cards[prev].pid == myPid) {
                device.enablePeerAccess(deviceOf(cards[prev].pciBusId));
                prevAddress = cards[prev].address;
            } else {
                prevMapping = device.openIpc(cards[prev].handle, REGION_BYTES);
                prevAddress = prevMapping.segment().address();
            }
            return new Setup(new PeerRing(device, rank, nranks, region, nextMapping, prevMapping, nextAddress,
                    prevAddress, control, timeoutNanos), null);
        } catch (RuntimeException e) {
            // Every rank agreed; a mapping that fails now is a driver failure, reported as such.
            close(nextMapping);
            close(prevMapping);
            close(region);
            close(control);
            throw e;
        }
    }

    /**
     * Connections the network ring needs: per channel a receiving one from the previous rank over
     * {@code recvFifos[c]} and a sending one to the next rank over {@code sendFifos[c]}, returned in
     * that order (receive, send, receive, send...). A collective of the communicator.
     */
    @FunctionalInterface
    public interface FifoConnector {
        /** @param onDevice whether the FIFOs are GPU memory (GPUDirect) */
        List<Connection> connect(MemorySegment[] recvFifos, MemorySegment[] sendFifos, boolean onDevice);
    }

    /**
     * Sets up the ring through the network (NCCL's kernel-and-proxy FIFO, see {@link NetFifo}); every
     * rank calls it at the same point of its calls.
     *
     * @param disabled why this rank will not take part ({@code JCCL_NET_FIFO=0}), or null
     * @param channels connections per direction: blocks a call runs on at most
     * @return the ring, or null and why not: the same outcome on every rank
     */
    public static Setup overNetwork(int rank, int nranks, CudaDevice device, Function<byte[], byte[][]> allGather,
                                    String disabled, int channels, long timeoutNanos, boolean gpuDirect,
                                    FifoConnector connector) {
        Card mine = disabled != null ? Card.unwilling(disabled) : !Nvrtc.isAvailable()
                ? Card.unwilling("NVRTC is unavailable: " + Nvrtc.unavailabilityCause().getMessage())
                : new Card(true, "", ProcessHandle.current().pid(), device.pciBusId(), false, 0, new byte[0]);
        String why = firstUnwilling(cards(allGather.apply(mine.toBytes()), nranks));
        if (why != null) {
            return new Setup(null, why);
        }
        int c = Math.max(1, Math.min(MAX_CHANNELS, channels));
        DeviceBuffer region = null;
        DeviceBuffer outbox = null;
        DeviceBuffer control = null;
        DeviceBuffer recvSlots = null;
        DeviceBuffer sendSlots = null;
        String problem = null;
        try {
            // With GPUDirect only the counters are pinned host memory; the slots are GPU memory.
            region = device.allocatePinnedHost(NetFifo.regionBytes(gpuDirect ? 0 : c));
            outbox = device.allocatePinnedHost(NetFifo.regionBytes(gpuDirect ? 0 : c));
            control = device.allocatePinnedHost(8);
            if (gpuDirect) {
                recvSlots = device.allocate(NetFifo.regionBytes(c) - FIFO_OFFSET);
                sendSlots = device.allocate(NetFifo.regionBytes(c) - FIFO_OFFSET);
            }
            region.segment().asSlice(0, FIFO_OFFSET).fill((byte) 0);
            outbox.segment().asSlice(0, FIFO_OFFSET).fill((byte) 0);
            control.segment().fill((byte) 0);
        } catch (RuntimeException e) {
            problem = "cannot allocate the FIFOs' memory: " + e.getMessage();
        }
        why = firstUnwilling(cards(allGather.apply((problem == null ? mine : Card.unwilling(problem)).toBytes()), nranks));
        if (why != null) {
            close(region);
            close(outbox);
            close(control);
            close(recvSlots);
            close(sendSlots);
            return new Setup(null, why);
        }
        PeerRing ring = null;
        try {
            MemorySegment[] recvFifos = new MemorySegment[c];
            MemorySegment[] sendFifos = new MemorySegment[c];
            for (int i = 0; i < c; i++) {
                recvFifos[i] = gpuDirect ? NetFifo.slots(recvSlots.segment(), i) : NetFifo.fifo(region.segment(), i);
                sendFifos[i] = gpuDirect ? NetFifo.slots(sendSlots.segment(), i) : NetFifo.fifo(outbox.segment(), i);
            }
            List<Connection> connections = connector.connect(recvFifos, sendFifos, gpuDirect);
            long outboxAddress = outbox.segment().address();
            ring = new PeerRing(device, rank, nranks, region, null, null, outboxAddress, outboxAddress, control,
                    timeoutNanos);
            ring.outbox = outbox;
            if (gpuDirect) {
                ring.deviceRecvSlots = recvSlots;
                ring.deviceSendSlots = sendSlots;
                ring.recvFifoAddress = recvSlots.segment().address();
                ring.sendFifoAddress = sendSlots.segment().address();
            }
            ring.maxChannels = c;
            ring.fifo = NetFifo.start(c, region.segment(), outbox.segment(), connections, ring::abort, "jccl-fifo-proxy-r" + rank);
            return new Setup(ring, null);
        } catch (RuntimeException e) {
            close(region);
            close(outbox);
            close(control);
            close(recvSlots);
            close(sendSlots);
            throw e;
        }
    }

    private static String firstUnwilling(Card[] cards) {
        for (int r = 0; r < cards.length; r++) {
            if (!cards[r].willing) {
                return "rank " + r + ": " + cards[r].why;
            }
        }
        return null;
    }

    /** @return whether this network ring's slots are GPU memory that the transport reads and writes (GPUDirect) */
    public boolean slotsInGpuMemory() {
        return deviceRecvSlots != null;
    }

    /** @return whether this ring crosses the network (its kernels' neighbours are a proxy) */
    public boolean overNetwork() {
        return fifo != null;
    }

    /** @return the network ring's connections, for the log (empty for the P2P ring) */
    public String connections() {
        return fifo == null ? "" : fifo.describe();
    }

    private static Card[] cards(byte[][] all, int nranks) {
        Card[] cards = new Card[nranks];
        for (int r = 0; r < nranks; r++) {
            cards[r] = Card.fromBytes(all[r]);
        }
        return cards;
    }

    /** Why no rank takes part, from what every rank knows alike: null if the ring may run. */
    static String sharedVerdict(Card[] cards) {
        for (int r = 0; r < cards.length; r++) {
            if (!cards[r].willing) {
                return "rank " + r + ": " + cards[r].why;
            }
        }
        for (int r = 0; r < cards.length; r++) {
            for (int s = r + 1; s < cards.length; s++) {
                boolean bothAgreeToShare = cards[r].sharesGpu && cards[s].sharesGpu;
                if (cards[r].pciBusId.equals(cards[s].pciBusId) && !bothAgreeToShare) {
                    return "ranks " + r + " and " + s + " share GPU " + cards[r].pciBusId
                            + " (a ring through CUDA IPC needs a GPU per rank)";
                }
            }
        }
        return null;
    }

    /** Why this rank cannot reach a neighbour's GPU, or null. */
    private static String reachable(Card[] cards, CudaDevice device, int next, int prev) {
        for (int peer : new int[] {next, prev}) {
            CudaDevice other = deviceOf(cards[peer].pciBusId);
            if (other == null) {
                return "GPU " + cards[peer].pciBusId + " of rank " + peer + " is not visible to this process "
                        + "(CUDA_VISIBLE_DEVICES)";
            }
            if (!device.canAccessPeer(other)) {
                return device.pciBusId() + " cannot access " + cards[peer].pciBusId + " (no NVLink or PCIe P2P)";
            }
        }
        return null;
    }

    private static CudaDevice deviceOf(String pciBusId) {
        for (int i = 0; i < Cuda.deviceCount(); i++) {
            CudaDevice d = Cuda.device(i);
            if (d.pciBusId().equals(pciBusId)) {
                return d;
            }
        }
        return null;
    }

    private static void close(DeviceBuffer b) {
        if (b != null) {
            b.close();
        }
    }

    /** @return the GPU this rank's kernels run on */
    public CudaDevice device() {
        return device;
    }

    /** @return whether this ring has a kernel for {@code op} on {@code type} (compiling it on first use) */
    public synchronized boolean supports(DataType type, ReduceOp op) {
        return kernel(type, kernelOp(type, op)) != null;
    }

    /** The collectives the ring runs: the kernel's {@code kind} argument (ring.cu's RING_*). */
    static final int ALL_REDUCE = 0;
    static final int REDUCE_SCATTER = 1;
    static final int ALL_GATHER = 2;
    static final int BROADCAST = 3;
    static final int REDUCE = 4;
    /** All-reduce of two ranks through the network in one exchange (one hop a round, not two). */
    static final int ALL_REDUCE_PAIR = 5;
    /**
     * Largest all-reduce of two ranks that takes {@link #ALL_REDUCE_PAIR} through the network: the
     * latency-bound sizes, where a hop of the proxy and transport costs more than moving the bytes.
     */
    static final long PAIR_MAX_BYTES = 128 << 10;

    /**
     * Queues the all-reduce of {@code count} elements on {@code stream} and returns. Every rank makes
     * the same calls in the same order, as for any collective.
     */
    public void allReduce(MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op,
                          CudaStream stream) {
        run(ALL_REDUCE, 0, send, recv, count, type, op, count, stream);
    }

    /** Queues the reduce-scatter of {@code recvCount} elements a rank ({@code send} holds one block per rank). */
    public void reduceScatter(MemorySegment send, MemorySegment recv, long recvCount, DataType type, ReduceOp op,
                              CudaStream stream) {
        run(REDUCE_SCATTER, 0, send, recv, recvCount, type, op, recvCount, stream);
    }

    /** Queues the reduction of every rank's {@code count} elements into {@code root}'s {@code recv}. */
    public void reduce(MemorySegment send, MemorySegment recv, long count, DataType type, ReduceOp op, int root,
                       CudaStream stream) {
        run(REDUCE, root, send, rank == root ? recv : send, count, type, op, rank == root ? count : 0, stream);
    }

    /** Queues the all-gather of {@code sendCount} elements a rank; bytes move whatever the type. */
    public void allGather(MemorySegment send, MemorySegment recv, long sendCount, DataType type, CudaStream stream) {
        run(ALL_GATHER, 0, send, recv, sendCount * type.size(), DataType.UINT8, ReduceOp.SUM, 0, stream);
    }

    /** Queues the broadcast of {@code root}'s {@code count} elements; bytes move whatever the type. */
    public void broadcast(MemorySegment send, MemorySegment recv, long count, DataType type, int root,
                          CudaStream stream) {
        run(BROADCAST, root, rank == root ? send : recv, recv, count * type.size(), DataType.UINT8, ReduceOp.SUM, 0,
                stream);
    }

    /**
     * @param count   elements the kernel walks: of the buffer, or of each rank's block
     * @param results elements of {@code recv} that hold a sum to divide for avg (0: none here)
     */
    private synchronized void run(int kind, int root, MemorySegment send, MemorySegment recv, long count, DataType type,
                                  ReduceOp op, long results, CudaStream stream) {
        if (closed) {
            throw new IllegalStateException("the P2P ring is closed");
        }
        if (count == 0) {
            return;
        }
        CudaFunction f = kernel(type, kernelOp(type, op));
        if (f == null) {
            throw new UnsupportedOperationException(op.ncclName() + " on " + type.ncclName() + " has no kernel on "
                    + device);
        }
        int grid = Math.min(maxChannels, channels(count * type.size()));
        if (kind == ALL_REDUCE && fifo != null && nranks == 2 && count * type.size() <= PAIR_MAX_BYTES) {
            kind = ALL_REDUCE_PAIR; // decided alike on both ranks, from the call's arguments
        }
        if (fifo != null) {
            fifo.expect(kind, root, count, type.size(), nranks, rank, grid);
        }
        f.launch(stream, grid, THREADS, kind, root, send, recv, count, nranks, rank,
                region.segment().address(), nextAddress, prevAddress, recvFifoAddress, sendFifoAddress, control.segment(),
                timeoutNanos);
        if (op == ReduceOp.AVG && !premultiplies(type, op) && results > 0) {
            divisions.get(type).launch(stream, (int) Math.min(65535, (results + 255) / 256), 256, recv, results, nranks);
        }
        CudaEvent e = stream.record();
        if (last != null) {
            last.close();
        }
        last = e;
    }

    /** Channels a call of {@code bytes} runs on: the same on every rank. */
    static int channels(long bytes) {
        return (int) Math.max(1, Math.min(MAX_CHANNELS, (bytes + BYTES_PER_CHANNEL - 1) / BYTES_PER_CHANNEL));
    }

    private CudaFunction kernel(DataType type, ReduceOp op) {
        Map<ReduceOp, CudaFunction> byOp = kernels.computeIfAbsent(type, t -> new EnumMap<>(ReduceOp.class));
        if (byOp.containsKey(op)) {
            return byOp.get(op);
        }
        String name = CudaReductionKernel.typeName(type);
        CudaFunction f = null;
        try {
            String opName = op.name().toLowerCase(Locale.ROOT);
            CudaModule module = module(device, arch, type, op);
            f = module.function("jccl_ring_" + name + "_" + opName);
            if (!divisions.containsKey(type)) {
                divisions.put(type, module.function("jccl_" + name + "_div"));
            }
        } catch (IllegalStateException e) {
            if (type.size() != 1 || !type.isFloatingPoint()) {
                throw e; // our source failed to compile: a bug, not a missing capability
            }
            // 8-bit floats below compute capability 8.9: reduce.cu has no functors for them
        }
        byOp.put(op, f);
        return f;
    }

    private static CudaModule module(CudaDevice device, String arch, DataType type, ReduceOp op) {
        synchronized (MODULES) {
            String key = device.pciBusId() + " " + CudaReductionKernel.typeName(type) + " " + op.name();
            CudaModule m = MODULES.get(key);
            if (m == null) {
                m = CudaModule.load(device, Nvrtc.compile(source(type, op), "ring_" + CudaReductionKernel.typeName(type) + "_"
                        + op.name().toLowerCase(Locale.ROOT) + ".cu", arch));
                MODULES.put(key, m);
            }
            return m;
        }
    }

    /**
     * The CUDA source of {@code jccl_ring_<type>_<op>} (with reduce.cu's operations and divisions):
     * avg on float16, bfloat16, float32 and float64 is its own kernel (NCCL's pre-multiplied sum),
     * on the other types the sum's kernel and a division.
     */
    static String source(DataType type, ReduceOp op) {
        String instance = premultiplies(type, op)
                ? "RING_AVG_KERNEL(" + CudaReductionKernel.typeName(type) + ", " + cType(type) + ", RING_SCALE_" + type.name() + ")"
                : "RING_KERNEL(" + CudaReductionKernel.typeName(type) + ", " + op.name().toLowerCase(Locale.ROOT) + ", " + cType(type) + ")";
        return "#define JCCL_OPS_ONLY 1\n#define RING_SLOTS " + SLOTS + "\n#define RING_SLOT_BYTES " + SLOT_BYTES
                + "\n#define RING_CHANNEL_STRIDE " + CHANNEL_STRIDE + "\n#define RING_FIFO_OFFSET " + FIFO_OFFSET
                + "\n" + CudaReductionKernel.source() + "\n" + ringSource() + "\n" + instance + "\n";
    }

    /** Whether {@code op} on {@code type} is NCCL's pre-multiplied sum: avg on 16-, 32- and 64-bit floats. */
    static boolean premultiplies(DataType type, ReduceOp op) {
        return op == ReduceOp.AVG && (type == DataType.FLOAT16 || type == DataType.BFLOAT16
                || type == DataType.FLOAT32 || type == DataType.FLOAT64);
    }

    /** The kernel that runs {@code op}: avg is the sum's and a division where it does not pre-multiply. */
    private static ReduceOp kernelOp(DataType type, ReduceOp op) {
        return op == ReduceOp.AVG && !premultiplies(type, op) ? ReduceOp.SUM : op;
    }


    private static String cType(DataType type) {
        return switch (type) {
            case INT8 -> "i8";
            case UINT8, FLOAT8_E4M3, FLOAT8_E5M2 -> "u8";
            case INT32 -> "int";
            case UINT32 -> "u32";
            case INT64 -> "i64";
            case UINT64 -> "u64";
            case FLOAT16, BFLOAT16 -> "u16";
            case FLOAT32 -> "float";
            case FLOAT64 -> "double";
        };
    }

    private static String ringSource() {
        try (InputStream in = PeerRing.class.getResourceAsStream("ring.cu")) {
            if (in == null) {
                throw new IllegalStateException("ring.cu is missing from jccl-core's jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @return why a kernel of this ring stopped early (its output incomplete), or null: read by the
     *         communicator before each call and when asked for its asynchronous error
     */
    public String failure() {
        String network = fifo == null ? null : fifo.failure();
        if (network != null) {
            return network;
        }
        if (control.segment().get(JAVA_INT, 4) == 1) {
            return "a GPU of the " + (fifo == null ? "P2P" : "network") + " ring made no progress for " + timeoutNanos / 1_000_000 + " ms: a rank is "
                    + "frozen, dead, or behind in its calls";
        }
        return null;
    }

    /** Makes every kernel of this ring, running or queued, return at its next wait. */
    public void abort() {
        control.segment().set(JAVA_INT, 0, 1);
    }

    /**
     * Waits (at most {@code timeoutNanos}) for the last kernel this rank queued.
     *
     * @return whether it ended
     */
    public synchronized boolean awaitLastKernel(long timeoutNanos) {
        if (last == null) {
            return true;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        while (!last.isDone()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    /**
     * Unmaps the neighbours and frees this rank's region, once this rank's kernels ended (every rank
     * waited for its own before the communicator's closing barrier, so no peer writes here any more);
     * if one is still running, the memory is left allocated rather than freed under it.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        boolean ended = awaitLastKernel(java.util.concurrent.TimeUnit.SECONDS.toNanos(10));
        if (fifo != null) {
            fifo.close();
        }
        if (!ended) {
            return;
        }
        if (last != null) {
            last.close();
        }
        close(outbox);
        close(deviceRecvSlots);
        close(deviceSendSlots);
        close(nextMapping);
        close(prevMapping);
        close(region);
        close(control);
    }
}
