package io.jccl.core.collective;

import io.jccl.core.JcclException;
import io.jccl.core.config.CoreConfig;
import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.transport.RecvConnection;
import io.jccl.core.transport.SendConnection;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntFunction;
import java.util.function.LongFunction;

/**
 * Turns the calls of one group (or one ungrouped call) into the tasks of one {@link Operation}:
 * each collective is split over channels into {@link RingTask}s, chained per channel in call
 * order; sends and receives are gathered per peer, in call order, into {@link SendTask}s and
 * {@link RecvTask}s that all progress at once, so no order of grouped sends and receives can
 * deadlock.
 */
public final class OperationBuilder {
    /**
     * The ring connections of a communicator.
     *
     * @param rank      this rank
     * @param nranks    ranks
     * @param send      per channel, the connection to {@code rank + 1}; empty on one rank
     * @param recv      per channel, the connection from {@code rank - 1}; empty on one rank
     * @param channels  channels available
     * @param stepBytes slot size of ring connections
     * @param overNetwork whether some hop of the ring goes through the network plugin (the same on
     *                  every rank: ranks on several hosts, or shared memory off)
     */
    public record Ring(int rank, int nranks, SendConnection[] send, RecvConnection[] recv, int channels, int stepBytes,
                       boolean overNetwork) {
    }

    /** Where tree tasks get their connections: made on first use, the same on every rank. */
    public interface TreeSource {
        /** @return this rank's connections in tree {@code tree} (0 or 1) of {@code channel}, rooted at {@code root} */
        TreeLinks links(int root, int channel, int tree);
    }

    /**
     * Where halving-doubling tasks get their connections: to each round's partner, made on first
     * use, apart from the send/recv connections (whose messages would otherwise interleave with a
     * group's sends in an order that depends on each rank's progress).
     */
    public interface HalvingDoublingSource {
        /** @return this rank's connections on {@code channel} to the partner of each round ({@link HalvingDoublingLinks}) */
        HalvingDoublingLinks links(int channel);
    }

    /**
     * @param position this rank's place in {@link HalvingDoublingTask}'s order ({@link #position})
     * @param send per round of the reduce-scatter, the connection to that round's partner
     *             ({@link #partners(int, int, int)})
     * @param recv the connections from the same partners
     *             (all with the ring's slot size, so a message is one slot on either side)
     */
    public record HalvingDoublingLinks(int position, SendConnection[] send, RecvConnection[] recv) {
        /**
         * @param ranksPerHost where above 1, the hosts hold blocks of that many ranks (rank
         *                     {@code r} on host {@code r / ranksPerHost}, a power of two): the rounds
         *                     then pair partners at distance 1, 2, 4, ... instead of n/2, n/4, ...,
         *                     so that the first rounds, which move the most, stay inside a host
         *                     (shared memory) and only the last ones, with the least, cross hosts
         * @return the partner of each round of the reduce-scatter of {@code rank} among {@code n}
         */
        public static int[] partners(int n, int rank, int ranksPerHost) {
            int rounds = Integer.numberOfTrailingZeros(n);
            int[] partners = new int[rounds];
            for (int r = 0; r < rounds; r++) {
                partners[r] = rank ^ (ranksPerHost > 1 ? 1 << r : n >> (r + 1));
            }
            return partners;
        }

        /**
         * @return the place of {@code rank} in the task's order ({@link HalvingDoublingTask}
         *         pairs places at distance n/2 first): the rank itself, or with blocks of ranks per
         *         host its bits reversed, which turns the task's distances n/2, n/4, ... into the
         *         ranks' 1, 2, ... of {@link #partners(int, int, int)}
         */
        public static int position(int n, int rank, int ranksPerHost) {
            int rounds = Integer.numberOfTrailingZeros(n);
            return ranksPerHost > 1 && rounds > 0 ? Integer.reverse(rank) >>> (32 - rounds) : rank;
        }
    }

    private final Ring ring;
    private final Tuner tuner;
    private final TreeSource trees;
    /** The halving-doubling connections, or null where the communicator has none to offer. */
    private HalvingDoublingSource halvingDoubling;
    /** This rank's CollNet part, or null without CollNet. */
    private final CollNetLinks collNet;
    /** CollNet's lane: its own connections, apart from the rings' and trees'. */
    private static final int COLLNET_LANE = -1;
    /** Halving-doubling's lane on channel {@code c} is {@code HALVING_DOUBLING_LANE - c}: its own connections to its partners. */
    private static final int HALVING_DOUBLING_LANE = -2;
    /**
     * Tasks by the connections they use, each list run in call order: ring channel {@code c} is
     * lane {@code c}, tree {@code t} of channel {@code c} lane {@code channels + 2c + t}.
     */
    private final Map<Integer, List<Task>> chains = new TreeMap<>();
    private final Map<Integer, List<Transfer>> sends = new TreeMap<>();
    private final Map<Integer, List<Transfer>> recvs = new TreeMap<>();
    private final List<String> names = new ArrayList<>();
    /** Bytes the calls of the group move, for the JFR event. */
    private long bytes;
    /** Ring, Tree, P2P, local, or mixed for a group of several. */
    private String algorithm;

    /**
     * @param tuner chooses between rings and trees
     * @param trees the tree connections, for the collectives the tuner gives to trees
     */
    public OperationBuilder(Ring ring, Tuner tuner, TreeSource trees) {
        this(ring, tuner, trees, null);
    }

    /**
     * @param collNet this rank's CollNet part, for the all-reduces the tuner gives to CollNet; null
     *                without CollNet
     */
    public OperationBuilder(Ring ring, Tuner tuner, TreeSource trees, CollNetLinks collNet) {
        this.ring = ring;
        this.tuner = tuner;
        this.trees = trees;
        this.collNet = collNet;
    }

    /** Lets the tuner give all-reduces to halving-doubling, whose connections come from {@code source}. */
    public OperationBuilder withHalvingDoubling(HalvingDoublingSource source) {
        this.halvingDoubling = source;
        return this;
    }

    private List<Task> lane(int lane) {
        return chains.computeIfAbsent(lane, k -> new ArrayList<>());
    }

    /** @return channels an operation of {@code bytes} uses: one per 64 KiB, up to the communicator's */
    int activeChannels(long bytes) {
        long wanted = Math.max(1, (bytes + CoreConfig.MIN_BYTES_PER_CHANNEL - 1) / CoreConfig.MIN_BYTES_PER_CHANNEL);
        return (int) Math.min(wanted, ring.channels());
    }

    /**
     * Slots in the chunk of one ring step (NCCL's {@code CHUNKSTEPS} = NCCL_STEPS / 2): a step moves
     * its chunk as slot-sized slices, so two steps' slices fit in the ring of slots at once.
     */
    static final int CHUNK_SLOTS = 4;
    /** Slices a step's chunk is cut into at least, so that the next rank starts on the first slice early. */
    static final int MIN_SLICES = 4;
    /** Smallest slice worth a message of its own. */
    static final long MIN_SLICE_BYTES = 128 << 10;
    /**
     * Smallest slice worth a message of its own on a ring with a network hop. A network message
     * costs far more than a shared-memory slot (a loopback TCP write of 128 KiB moved 1.7 GB/s
     * each way between two processes on the 2-core build machine, one of 512 KiB 2.7), so a ring
     * over the network cuts its chunks into fewer, larger slices: NCCL's network step with its
     * default 4 MiB buffer.
     */
    static final long NET_MIN_SLICE_BYTES = 512 << 10;

    private interface AlgorithmFactory {
        RingAlgorithm create(long base, long count, long maxChunk);
    }

    /**
     * Elements per slice (one message) of a ring step's chunk: {@link #MIN_SLICES} of them, but none
     * smaller than the minimum of the ring's transport ({@link #NET_MIN_SLICE_BYTES} with a network
     * hop, else {@link #MIN_SLICE_BYTES}), nor larger than a slot.
     */
    static long sliceElements(long slot, long maxChunk, int typeSize, long align, boolean overNetwork) {
        long minSlice = (overNetwork ? NET_MIN_SLICE_BYTES : MIN_SLICE_BYTES) / typeSize;
        return Math.min(slot, roundUp(Math.max(RingAlgorithm.ceilDiv(maxChunk, MIN_SLICES), minSlice), align));
    }

    /** Splits {@code elements} over the channels and adds one ring task per channel that has a share. */
    private void split(String name, long elements, long bytes, DataType type, ReduceOp op, MemorySegment in,
                       MemorySegment out, ReductionKernel kernel, int chunksPerLoop, AlgorithmFactory factory) {
        names.add(name);
        record(bytes, ring.nranks() == 1 ? "local" : "Ring");
        if (elements == 0) {
            return;
        }
        int n = ring.nranks();
        int active = n == 1 ? 1 : activeChannels(bytes);
        long align = Math.max(1, 64 / type.size());
        long per = (RingAlgorithm.ceilDiv(elements, active) + align - 1) / align * align;
        // NCCL's ring geometry: a step moves a chunk of up to CHUNK_SLOTS slots, as slices that each
        // travel as one message, and a rank works on a slice as soon as it arrives (the pipeline).
        // Shares smaller than a loop of full chunks get smaller chunks, and their chunks smaller
        // slices, down to MIN_SLICE_BYTES, so that the pipeline still has MIN_SLICES stages.
        long slot = Math.max(1, ring.stepBytes() / type.size());
        long maxChunk = Math.min(CHUNK_SLOTS * slot, roundUp(RingAlgorithm.ceilDiv(per, chunksPerLoop), align));
        long slice = sliceElements(slot, maxChunk, type.size(), align, ring.overNetwork());
        for (int c = 0; c < active; c++) {
            long base = c * per;
            long count = Math.min(per, elements - base);
            if (count <= 0) {
                break;
            }
            RingAlgorithm a = factory.create(base, count, maxChunk);
            lane(c).add(new RingTask(a, slice, name, n == 1 ? null : ring.send()[c],
                    n == 1 ? null : ring.recv()[c], kernel, type, op == null ? ReduceOp.SUM : op, n, in, out));
        }
    }

    /** Slices a tree's share is cut into at least: the pipeline that hides the tree's depth. */
    static final int MIN_TREE_SLICES = 8;
    /** Smallest slice of a tree worth a message of its own. */
    static final long MIN_TREE_SLICE_BYTES = 32 << 10;

    /**
     * Splits {@code elements} over the channels, each channel's share in two halves, one per tree
     * of the {@link DoubleBinaryTree} rooted at {@code root}, and adds one tree task per half.
     */
    private void splitTree(String name, TreeTask.Shape shape, long elements, DataType type, ReduceOp op, int root,
                           MemorySegment in, MemorySegment out, ReductionKernel kernel, boolean rootCopies) {
        names.add(name);
        record(elements * type.size(), "Tree");
        if (elements == 0) {
            return;
        }
        int active = activeChannels(elements * type.size());
        long align = Math.max(1, 64 / type.size());
        long per = roundUp(RingAlgorithm.ceilDiv(elements, 2L * active), align);
        long slot = Math.max(1, ring.stepBytes() / type.size());
        long slice = Math.min(slot, roundUp(Math.max(RingAlgorithm.ceilDiv(per, MIN_TREE_SLICES),
                MIN_TREE_SLICE_BYTES / type.size()), align));
        for (int k = 0; k < 2 * active; k++) {
            long base = k * per;
            long count = Math.min(per, elements - base);
            if (count <= 0) {
                break;
            }
            int channel = k / 2;
            int tree = k % 2;
            TreeLinks links = trees.links(root, channel, tree);
            lane(ring.channels() + k).add(new TreeTask(shape, name, links, kernel, type, op == null ? ReduceOp.SUM : op,
                    ring.nranks(), in, out, base, count, slice, rootCopies));
        }
    }

    /** @return whether the tuner gives a call of {@code bytes} to trees */
    private boolean onTrees(Tuner.Collective collective, long bytes) {
        return ring.nranks() > 1 && tuner.choose(collective, bytes) == Algorithm.TREE;
    }

    private static long roundUp(long value, long multiple) {
        return Math.max(multiple, (value + multiple - 1) / multiple * multiple);
    }

    /** NCCL's {@code ncclAllReduce}. */
    public void allReduce(MemorySegment in, MemorySegment out, long count, DataType type, ReduceOp op,
                          ReductionKernel kernel) {
        int n = ring.nranks();
        boolean avg = op == ReduceOp.AVG;
        long bytes = count * type.size();
        Algorithm a = n == 1 ? Algorithm.RING : tuner.choose(Tuner.Collective.ALL_REDUCE, bytes,
                collNet != null && collNet.supports(type, op));
        if (a == Algorithm.COLLNET) {
            names.add("allReduce");
            record(bytes, Algorithm.COLLNET.ncclName());
            if (count > 0) {
                lane(COLLNET_LANE).add(new CollNetTask(collNet, kernel, type, op, in, out, 0, bytes));
            }
            return;
        }
        if (a == Algorithm.TREE) {
            splitTree("allReduce", TreeTask.Shape.UP_DOWN, count, type, op, 0, in, out, kernel, false);
            return;
        }
        if (a == Algorithm.HALVING_DOUBLING && halvingDoubling != null) {
            names.add("allReduce");
            record(bytes, Algorithm.HALVING_DOUBLING.ncclName());
            if (count > 0) {
                // Split over the channels as a ring is, each share halved and doubled on the
                // channel's own connections: the same streams in parallel as the ring's.
                int active = activeChannels(bytes);
                long align = Math.max(1, 64 / type.size());
                long per = roundUp(RingAlgorithm.ceilDiv(count, active), align);
                for (int c = 0; c < active; c++) {
                    long base = c * per;
                    long share = Math.min(per, count - base);
                    if (share <= 0) {
                        break;
                    }
                    HalvingDoublingLinks links = halvingDoubling.links(c);
                    long slice = Math.max(align, links.send()[0].slotBytes() / type.size() / align * align);
                    lane(HALVING_DOUBLING_LANE - c).add(new HalvingDoublingTask(n, links.position(), links.send(),
                            links.recv(), kernel, type, op, in, out, base, share, slice, "allReduce"));
                }
            }
            return;
        }
        split("allReduce", count, count * type.size(), type, op, in, out, kernel, n, (base, c, chunk) -> n == 1
                ? new LocalCopy(0, base, c, avg) : new RingAllReduce(n, ring.rank(), base, c, chunk, avg));
    }

    /** NCCL's {@code ncclAllGather}: {@code count} elements per rank. */
    public void allGather(MemorySegment in, MemorySegment out, long count, DataType type, ReductionKernel kernel) {
        int n = ring.nranks();
        split("allGather", count, count * type.size() * n, type, null, in, out, kernel, 1, (base, c, chunk) -> n == 1
                ? new LocalCopy(0, base, c, false) : new RingAllGather(n, ring.rank(), base, c, chunk, count));
    }

    /** NCCL's {@code ncclReduceScatter}: {@code count} result elements per rank. */
    public void reduceScatter(MemorySegment in, MemorySegment out, long count, DataType type, ReduceOp op,
                              ReductionKernel kernel) {
        int n = ring.nranks();
        boolean avg = op == ReduceOp.AVG;
        split("reduceScatter", count, count * type.size() * n, type, op, in, out, kernel, 1, (base, c, chunk) -> n == 1
                ? new LocalCopy(0, base, c, avg) : new RingReduceScatter(n, ring.rank(), base, c, chunk, count, avg));
    }

    /** NCCL's {@code ncclBroadcast}; {@code in} matters on the root only, {@code out} may equal it there. */
    public void broadcast(MemorySegment in, MemorySegment out, long count, DataType type, int root,
                          ReductionKernel kernel) {
        int n = ring.nranks();
        boolean rootCopies = ring.rank() == root && !sameMemory(in, out);
        if (onTrees(Tuner.Collective.BROADCAST, count * type.size())) {
            splitTree("broadcast", TreeTask.Shape.DOWN, count, type, null, root, in, out, kernel, rootCopies);
            return;
        }
        split("broadcast", count, count * type.size(), type, null, in, out, kernel, 1, (base, c, chunk) -> n == 1
                ? new LocalCopy(0, base, c, false)
                : new RingBroadcast(n, ring.rank(), root, base, c, chunk, rootCopies));
    }

    /** NCCL's {@code ncclReduce}; {@code out} matters on the root only. */
    public void reduce(MemorySegment in, MemorySegment out, long count, DataType type, ReduceOp op, int root,
                       ReductionKernel kernel) {
        int n = ring.nranks();
        boolean avg = op == ReduceOp.AVG;
        if (onTrees(Tuner.Collective.REDUCE, count * type.size())) {
            splitTree("reduce", TreeTask.Shape.UP, count, type, op, root, in, out, kernel, false);
            return;
        }
        split("reduce", count, count * type.size(), type, op, in, out, kernel, 1, (base, c, chunk) -> n == 1
                ? new LocalCopy(0, base, c, avg) : new RingReduce(n, ring.rank(), root, base, c, chunk, avg));
    }

    private void record(long moved, String how) {
        bytes += moved;
        algorithm = algorithm == null || algorithm.equals(how) ? how : "mixed";
    }

    /** @return bytes the group's calls move */
    public long bytes() {
        return bytes;
    }

    /** @return what carries the group: Ring, Tree, P2P, local, or mixed */
    public String algorithm() {
        return algorithm == null ? "none" : algorithm;
    }

    /** A send of the group; sends to one peer go out in call order. */
    public void send(int peer, Transfer t) {
        names.add("send");
        record(t.bytes(), "P2P");
        sends.computeIfAbsent(peer, k -> new ArrayList<>()).add(t);
    }

    /** A receive of the group; receives from one peer match that peer's sends in call order. */
    public void recv(int peer, Transfer t) {
        names.add("recv");
        record(t.bytes(), "P2P");
        recvs.computeIfAbsent(peer, k -> new ArrayList<>()).add(t);
    }

    /**
     * NCCL's {@code ncclAlltoAll}: a send of block {@code p} to every rank {@code p} and a receive
     * of block {@code p} from it, {@code bytes} each.
     */
    public void allToAll(MemorySegment in, MemorySegment out, long bytes) {
        names.add("allToAll");
        record(bytes * ring.nranks(), "P2P");
        for (int p = 0; p < ring.nranks(); p++) {
            sends.computeIfAbsent(p, k -> new ArrayList<>()).add(new Transfer(in, p * bytes, bytes));
            recvs.computeIfAbsent(p, k -> new ArrayList<>()).add(new Transfer(out, p * bytes, bytes));
        }
    }

    /**
     * Copies every send whose bytes a receive of the same group overwrites (in-place all-to-all,
     * a send/recv ring on one buffer), so that the send reads the data as it was at launch.
     *
     * @param staging gives memory of the bytes asked for ({@link #overlappingSendBytes}), left alone
     *                until the operation is done
     */
    public void stageOverlappingSends(LongFunction<MemorySegment> staging) {
        long bytes = overlappingSendBytes();
        if (bytes == 0) {
            return;
        }
        MemorySegment copy = staging.apply(bytes);
        long at = 0;
        for (List<Transfer> list : sends.values()) {
            for (int i = 0; i < list.size(); i++) {
                Transfer s = list.get(i);
                if (s.bytes() > 0 && overwritten(s)) {
                    MemorySegment.copy(s.buffer(), s.offset(), copy, at, s.bytes());
                    list.set(i, new Transfer(copy, at, s.bytes()));
                    at += align(s.bytes());
                }
            }
        }
    }

    /** @return the bytes {@link #stageOverlappingSends} needs (each send 64-byte aligned); 0 if no send overlaps */
    public long overlappingSendBytes() {
        if (sends.isEmpty() || recvs.isEmpty()) {
            return 0;
        }
        long bytes = 0;
        for (List<Transfer> list : sends.values()) {
            for (Transfer s : list) {
                if (s.bytes() > 0 && overwritten(s)) {
                    bytes += align(s.bytes());
                }
            }
        }
        return bytes;
    }

    private static long align(long bytes) {
        return (bytes + 63) & ~63L;
    }

    private boolean overwritten(Transfer s) {
        for (List<Transfer> list : recvs.values()) {
            for (Transfer r : list) {
                if (r.bytes() > 0 && overlap(s, r)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean overlap(Transfer a, Transfer b) {
        if (a.buffer().isNative() && b.buffer().isNative()) {
            long a0 = a.buffer().address() + a.offset();
            long b0 = b.buffer().address() + b.offset();
            return a0 < b0 + b.bytes() && b0 < a0 + a.bytes();
        }
        return a.buffer().heapBase().isPresent() && a.buffer().heapBase().equals(b.buffer().heapBase());
    }

    /** @return peers this group sends to, other than this rank */
    public List<Integer> sendPeers() {
        return sends.keySet().stream().filter(p -> p != ring.rank()).toList();
    }

    /** @return peers this group receives from, other than this rank */
    public List<Integer> recvPeers() {
        return recvs.keySet().stream().filter(p -> p != ring.rank()).toList();
    }

    /** @return e.g. {@code allReduce}, or {@code group(send, recv, send)} */
    public String name() {
        if (names.size() == 1) {
            return names.get(0);
        }
        List<String> shown = names.size() > 6 ? names.subList(0, 6) : names;
        return "group(" + String.join(", ", shown) + (names.size() > 6 ? ", ... " + names.size() + " calls" : "") + ")";
    }

    /**
     * @param p2pSend the connection to a peer (set up by then)
     * @param p2pRecv the connection from a peer
     * @return the operation's tasks
     * @throws JcclException if sends to this rank and receives from it do not pair up
     */
    public Task[] build(IntFunction<SendConnection> p2pSend, IntFunction<RecvConnection> p2pRecv,
                        ReductionKernel kernel) {
        List<Task> tasks = new ArrayList<>();
        for (List<Task> chain : chains.values()) {
            if (chain.size() == 1) {
                tasks.add(chain.get(0));
            } else if (!chain.isEmpty()) {
                tasks.add(new ChainTask(chain.toArray(new Task[0])));
            }
        }
        for (var e : sends.entrySet()) {
            if (e.getKey() != ring.rank()) {
                tasks.add(new SendTask(p2pSend.apply(e.getKey()), kernel, e.getValue()));
            }
        }
        for (var e : recvs.entrySet()) {
            if (e.getKey() != ring.rank()) {
                tasks.add(new RecvTask(p2pRecv.apply(e.getKey()), kernel, e.getValue()));
            }
        }
        List<Transfer> selfSends = sends.getOrDefault(ring.rank(), List.of());
        List<Transfer> selfRecvs = recvs.getOrDefault(ring.rank(), List.of());
        if (selfSends.size() != selfRecvs.size()) {
            throw JcclException.invalidUsage("a group has " + selfSends.size() + " sends to this rank (" + ring.rank()
                    + ") and " + selfRecvs.size() + " receives from it: each send to self needs a recv from self");
        }
        for (int i = 0; i < selfSends.size(); i++) {
            if (selfSends.get(i).bytes() != selfRecvs.get(i).bytes()) {
                throw JcclException.invalidUsage("send to self of " + selfSends.get(i).bytes()
                        + " bytes is paired with a recv from self of " + selfRecvs.get(i).bytes() + " bytes");
            }
        }
        if (!selfSends.isEmpty()) {
            tasks.add(new SelfTask(kernel, selfSends, selfRecvs));
        }
        return tasks.toArray(new Task[0]);
    }

    /** @return whether two whole buffers share any byte (heap segments: whether they share an array) */
    static boolean overlap(MemorySegment a, MemorySegment b) {
        if (a.isNative() && b.isNative()) {
            return a.address() < b.address() + b.byteSize() && b.address() < a.address() + a.byteSize();
        }
        return a.heapBase().isPresent() && a.heapBase().equals(b.heapBase());
    }

    static boolean sameMemory(MemorySegment a, MemorySegment b) {
        return a != null && b != null && a.isNative() && b.isNative() && a.address() == b.address();
    }
}
