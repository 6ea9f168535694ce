package io.jccl.tck.internal.collnet;

import io.jccl.spi.CollComm;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.DataType;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.spi.ReduceOp;
import io.jccl.tck.internal.Backoff;
import io.jccl.tck.internal.BoundedCall;
import io.jccl.tck.internal.Deadline;
import io.jccl.tck.internal.net.LifecycleChecks;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The CollNet rules ({@code coll.*}). */
public final class CollChecks {
    /** The operations NCCL asks about (it maps AVG and user operations to SUM first). */
    public static final List<ReduceOp> OPS = List.of(ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN);
    /** Group sizes every rule runs with. */
    public static final int[] GROUPS = {2, 3, 4};
    /** "Large": past any chunk size a CollNet transport is likely to use, odd, and quick to check. */
    public static final long LARGE = (1L << 18) + 1;
    private static final long ODD = 1001;

    /** A (type, op) pair. */
    public record Pair(DataType type, ReduceOp op) {
        @Override
        public String toString() {
            return op.testsName() + "/" + type.testsName();
        }
    }

    private final CollKit kit;
    private final long seed;

    public CollChecks(CollKit kit) {
        this.kit = kit;
        this.seed = kit.settings().seed();
    }

    private CollNetPlugin plugin() {
        return kit.plugin();
    }

    /** Skips the rule when CollNet is off here (0 devices). */
    public void assumeDevices() throws NetException {
        int n = plugin().devices();
        assumeTrue(n > 0, "the CollNet transport reports 0 devices (CollNet disabled here)");
    }

    public void initTwiceAndProperties(NetLogger logger) throws NetException {
        int before = plugin().devices();
        List<NetProperties> props = properties();
        plugin().init(logger);
        assertEquals(before, plugin().devices(), "devices() changed after a second init");
        assertEquals(props, properties(), "device properties changed after a second init");
        if (before < 0) {
            fail("devices() = " + before + "; it is >= 0 (0 disables CollNet)");
        }
        LifecycleChecks.namesUnique(props);
        LifecycleChecks.inRange(props);
        LifecycleChecks.hostPointers(props);
    }

    private List<NetProperties> properties() throws NetException {
        List<NetProperties> all = new ArrayList<>();
        for (int d = 0; d < plugin().devices(); d++) {
            all.add(plugin().getProperties(d));
        }
        return all;
    }

    /** @return every pair with reduceSupport's answer; fails if the answer is not stable or throws */
    public List<Pair> supported(boolean wanted) throws NetException {
        List<Pair> out = new ArrayList<>();
        for (DataType t : DataType.values()) {
            for (ReduceOp op : OPS) {
                boolean a = answer(t, op);
                if (a != answer(t, op)) {
                    fail("reduceSupport(" + t + ", " + op + ") changed its answer between two calls");
                }
                if (a == wanted) {
                    out.add(new Pair(t, op));
                }
            }
        }
        return out;
    }

    private boolean answer(DataType t, ReduceOp op) throws NetException {
        try {
            return plugin().reduceSupport(t, op);
        } catch (RuntimeException e) {
            fail("reduceSupport(" + t + ", " + op + ") threw " + e + "; it answers true or false for every pair");
            return false;
        }
    }

    public void reduceSupportAnswers() throws NetException {
        assumeDevices();
        supported(true);
    }

    public void groupsConnect() throws Exception {
        assumeDevices();
        for (int n : GROUPS) {
            CollComm[] comms = kit.connect(n);
            kit.close(comms);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // coll.4

    /** The kit's input: small integers every type (fp8 included) holds exactly, and whose reductions over 4 ranks it holds too. */
    static double input(ReduceOp op, DataType t, int rank, long i, long seed) {
        long h = mix(seed ^ (rank * 0x9E3779B97F4A7C15L) ^ (i * 0xC2B2AE3D27D4EB4FL) ^ (t.ordinal() * 31L + op.ordinal()));
        boolean unsigned = t == DataType.UINT8 || t == DataType.UINT32 || t == DataType.UINT64;
        long u = h >>> 1;
        return switch (op) {
            case SUM -> unsigned ? u % 3 : u % 5 - 2;
            case PROD -> unsigned ? 1 + u % 2 : new double[] {-1, 1, 2}[(int) (u % 3)];
            default -> unsigned ? u % 17 : u % 17 - 8;
        };
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    static double expected(ReduceOp op, DataType t, int nranks, long i, long seed) {
        double acc = input(op, t, 0, i, seed);
        for (int r = 1; r < nranks; r++) {
            double v = input(op, t, r, i, seed);
            acc = switch (op) {
                case SUM -> acc + v;
                case PROD -> acc * v;
                case MAX -> Math.max(acc, v);
                case MIN -> Math.min(acc, v);
                default -> throw new IllegalArgumentException(op.toString());
            };
        }
        return acc;
    }

    public void allreduceIsCorrect() throws Exception {
        assumeDevices();
        List<Pair> pairs = supported(true);
        assumeTrue(!pairs.isEmpty(), "reduceSupport refuses every (type, op) pair: nothing to reduce");
        long[] counts = {0, 1, ODD, LARGE};
        for (int n : GROUPS) {
            CollComm[] comms = kit.connect(n);
            try {
                kit.onEveryRank(n, kit.settings().ruleTimeout(), rank -> {
                    long bytes = LARGE * 8;
                    MemorySegment send = Arena.ofAuto().allocate(bytes, 4096);
                    MemorySegment recv = Arena.ofAuto().allocate(bytes, 4096);
                    MemoryHandle smh = plugin().regMr(comms[rank], send, PointerType.HOST);
                    MemoryHandle rmh = plugin().regMr(comms[rank], recv, PointerType.HOST);
                    int[] size = new int[1];
                    for (Pair p : pairs) {
                        for (long count : counts) {
                            allreduce(comms[rank], rank, n, p, count, send, smh, recv, rmh, size);
                        }
                        allreduce(comms[rank], rank, n, p, ODD, send, smh, send, smh, size);
                    }
                    plugin().deregMr(comms[rank], smh);
                    plugin().deregMr(comms[rank], rmh);
                });
            } finally {
                kit.close(comms);
            }
        }
    }

    private void allreduce(CollComm comm, int rank, int nranks, Pair p, long count, MemorySegment send,
                           MemoryHandle smh, MemorySegment recv, MemoryHandle rmh, int[] size) throws NetException {
        boolean inPlace = send == recv;
        String what = String.format(Locale.ROOT, "iallreduce %s of %d elements over %d ranks%s", p, count, nranks,
                inPlace ? ", in place" : "");
        DataType t = p.type();
        for (long i = 0; i < count; i++) {
            ElementCodec.put(send, i, t, input(p.op(), t, rank, i, seed));
        }
        if (!inPlace) {
            recv.asSlice(0, Math.max(1, count * t.size())).fill((byte) 0x5A);
        }
        MemorySegment s = send.asSlice(0, count * t.size());
        MemorySegment r = recv.asSlice(0, count * t.size());
        Deadline d = Deadline.after(kit.settings().completionTimeout());
        Backoff idle = new Backoff();
        NetRequest req;
        while (true) {
            long t0 = System.nanoTime();
            try {
                req = plugin().iallreduce(comm, s, r, count, t, p.op(), smh, rmh);
            } catch (NetException e) {
                throw new AssertionError(what + ": iallreduce threw " + e + " although reduceSupport accepts the pair", e);
            }
            kit.checkDuration("iallreduce", t0);
            if (req != null) {
                break;
            }
            if (d.expired()) {
                fail(what + ": iallreduce still returned null (would block) after " + Deadline.format(d.budget()));
            }
            idle.idle();
        }
        size[0] = -1;
        try {
            kit.await(req, size, what);
        } catch (NetException e) {
            throw new AssertionError(what + " failed: " + e, e);
        }
        if (size[0] != count * t.size()) {
            fail(what + ": test reported " + size[0] + " bytes; the result has " + count * t.size());
        }
        for (long i = 0; i < count; i++) {
            double want = expected(p.op(), t, nranks, i, seed);
            double got = ElementCodec.get(recv, i, t);
            if (got != want) {
                fail(String.format(Locale.ROOT, "%s: element %d is %s, expected %s (seed 0x%x)%s", what, i, got, want,
                        seed, i == count - 1 && count > 1 ? ": the last element of an odd count" : ""));
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // coll.5 to coll.7

    public void unsupportedPairsRefused() throws Exception {
        assumeDevices();
        List<Pair> refused = supported(false);
        assumeTrue(!refused.isEmpty(), "reduceSupport accepts every (type, op) pair: nothing to refuse");
        int n = 2;
        CollComm[] comms = kit.connect(n);
        try {
            kit.onEveryRank(n, kit.settings().connectTimeout(), rank -> {
                MemorySegment buf = Arena.ofAuto().allocate(64, 64);
                MemoryHandle mh = plugin().regMr(comms[rank], buf, PointerType.HOST);
                for (Pair p : refused) {
                    MemorySegment one = buf.asSlice(0, p.type().size());
                    NetRequest req;
                    try {
                        req = BoundedCall.call("iallreduce " + p + " (refused by reduceSupport)", kit.settings().callBound(),
                                "refusing must be immediate", () -> plugin().iallreduce(comms[rank], one, one, 1,
                                        p.type(), p.op(), mh, mh));
                    } catch (NetException e) {
                        if (e.result() != NetResult.INVALID_ARGUMENT) {
                            fail("iallreduce " + p + ", which reduceSupport refuses, failed with " + e
                                    + "; an unsupported pair is ncclInvalidArgument");
                        }
                        continue;
                    }
                    fail("iallreduce " + p + ", which reduceSupport refuses, returned "
                            + (req == null ? "null (would block)" : "a request") + " instead of failing with "
                            + "ncclInvalidArgument");
                }
                plugin().deregMr(comms[rank], mh);
            });
        } finally {
            kit.close(comms);
        }
    }

    public void deregOfUnknownHandleIsAnError() throws Exception {
        assumeDevices();
        CollComm[] comms = kit.connect(2);
        try {
            MemorySegment buf = Arena.ofAuto().allocate(4096, 64);
            MemoryHandle foreign = new MemoryHandle() {
                @Override
                public String toString() {
                    return "a MemoryHandle made by the kit";
                }
            };
            mustRefuse("deregMr of a handle this transport never issued", () -> plugin().deregMr(comms[0], foreign));
            MemoryHandle h = plugin().regMr(comms[0], buf, PointerType.HOST);
            plugin().deregMr(comms[0], h);
            mustRefuse("deregMr of a handle already released", () -> plugin().deregMr(comms[0], h));
        } finally {
            kit.close(comms);
        }
    }

    private interface Call {
        void run() throws NetException;
    }

    private static void mustRefuse(String what, Call call) {
        try {
            call.run();
        } catch (NetException e) {
            if (e.result() != NetResult.INVALID_ARGUMENT && e.result() != NetResult.INTERNAL_ERROR) {
                fail(what + " failed with " + e + "; a handle the comm did not issue is ncclInvalidArgument");
            }
            return;
        } catch (RuntimeException e) {
            fail(what + " threw " + e + " instead of a NetException");
        }
        fail(what + " succeeded: it must fail with ncclInvalidArgument");
    }

    public void closeWithRequestsInFlight() throws Exception {
        assumeDevices();
        List<Pair> pairs = supported(true);
        assumeTrue(!pairs.isEmpty(), "reduceSupport refuses every (type, op) pair: nothing to reduce");
        Pair p = pairs.contains(new Pair(DataType.FLOAT32, ReduceOp.SUM)) ? new Pair(DataType.FLOAT32, ReduceOp.SUM)
                : pairs.get(0);
        long count = 1024;
        CollComm[] comms = kit.connect(2);
        boolean[] closed = new boolean[2];
        try {
            MemorySegment[] bufs = {Arena.ofAuto().allocate(count * 8, 64), Arena.ofAuto().allocate(count * 8, 64)};
            MemoryHandle[] mhs = {plugin().regMr(comms[0], bufs[0], PointerType.HOST),
                    plugin().regMr(comms[1], bufs[1], PointerType.HOST)};
            MemorySegment s0 = bufs[0].asSlice(0, count * p.type().size());
            NetRequest pending = plugin().iallreduce(comms[0], s0, s0, count, p.type(), p.op(), mhs[0], mhs[0]);
            BoundedCall.call("closeColl with an iallreduce in flight", kit.settings().completionTimeout(),
                    "closing with requests in flight must be safe and return", () -> {
                        plugin().closeColl(comms[0]);
                        return null;
                    });
            closed[0] = true;
            // Rank 1 keeps going: within the peer-death bound one of its operations must fail.
            MemorySegment s1 = bufs[1].asSlice(0, count * p.type().size());
            Deadline d = Deadline.after(kit.settings().peerDeathTimeout());
            Backoff idle = new Backoff();
            NetRequest req = null;
            int completed = 0;
            int[] size = new int[1];
            while (true) {
                if (d.expired()) {
                    fail("rank 0 closed its comm with an iallreduce in flight" + (pending == null ? " (it would block)" : "")
                            + "; rank 1's iallreduce " + p + " did not fail within " + Deadline.format(d.budget()) + " ("
                            + completed + " completed, " + (req == null ? "iallreduce kept returning null" : "one pending")
                            + "): a rank that is gone must fail the others' requests");
                }
                try {
                    if (req == null) {
                        req = plugin().iallreduce(comms[1], s1, s1, count, p.type(), p.op(), mhs[1], mhs[1]);
                    }
                    if (req != null && plugin().test(req, size)) {
                        req = null;
                        completed++;
                    }
                } catch (NetException e) {
                    break;
                }
                idle.idle();
            }
        } finally {
            for (int r = 0; r < 2; r++) {
                if (!closed[r]) {
                    try {
                        plugin().closeColl(comms[r]);
                    } catch (NetException | RuntimeException e) {
                        // Closing after a failed group only has to return.
                    }
                }
            }
        }
    }

    // ---------------------------------------------------------------------------------------------
    // coll.8 and coll.9

    /** Elements of the coll.8 input: past several chunks of any likely chunk size, odd. */
    static final long SAME_BITS_COUNT = (1L << 17) + 3;

    /**
     * Every rank ends with the same bits, for floating-point sums too, whose value depends on the
     * order of the additions: NCCL gives every rank one result (a transport that reduces in a
     * different order for each rank, or lets each rank reduce its own copy, breaks that).
     */
    public void everyRankGetsTheSameBits() throws Exception {
        assumeDevices();
        List<Pair> pairs = new ArrayList<>();
        for (DataType t : List.of(DataType.FLOAT32, DataType.FLOAT64, DataType.FLOAT16, DataType.BFLOAT16)) {
            if (answer(t, ReduceOp.SUM)) {
                pairs.add(new Pair(t, ReduceOp.SUM));
            }
        }
        assumeTrue(!pairs.isEmpty(), "reduceSupport refuses floating-point sums: no order-dependent result to compare");
        int n = 3;
        CollComm[] comms = kit.connect(n);
        try {
            for (Pair p : pairs) {
                DataType t = p.type();
                byte[][] results = new byte[n][];
                kit.onEveryRank(n, kit.settings().ruleTimeout(), rank -> {
                    long bytes = SAME_BITS_COUNT * t.size();
                    MemorySegment send = Arena.ofAuto().allocate(bytes, 4096);
                    MemorySegment recv = Arena.ofAuto().allocate(bytes, 4096);
                    java.util.Random random = new java.util.Random(seed * 31 + rank);
                    for (long i = 0; i < SAME_BITS_COUNT; i++) {
                        // Magnitudes from 2^-20 to 2^20: sums that differ in their last bits by order.
                        int range = t == DataType.FLOAT16 ? 10 : 20;
                        double v = (random.nextDouble() - 0.5) * Math.scalb(1.0, random.nextInt(2 * range + 1) - range);
                        ElementCodec.put(send, i, t, v);
                    }
                    MemoryHandle smh = plugin().regMr(comms[rank], send, PointerType.HOST);
                    MemoryHandle rmh = plugin().regMr(comms[rank], recv, PointerType.HOST);
                    NetRequest req = issue(comms[rank], send, recv, SAME_BITS_COUNT, p, smh, rmh, "iallreduce " + p);
                    int[] size = new int[1];
                    kit.await(req, size, "iallreduce " + p + " of " + SAME_BITS_COUNT + " random elements");
                    results[rank] = recv.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
                    plugin().deregMr(comms[rank], smh);
                    plugin().deregMr(comms[rank], rmh);
                });
                for (int r = 1; r < n; r++) {
                    int at = java.util.Arrays.mismatch(results[0], results[r]);
                    if (at >= 0) {
                        long element = at / t.size();
                        fail(String.format(Locale.ROOT, "iallreduce %s over %d ranks: rank %d's element %d is %s, rank "
                                + "0's is %s: every rank must end with the same bits (one reduction order for all)",
                                p, n, r, element, ElementCodec.get(MemorySegment.ofArray(results[r]), element, t),
                                ElementCodec.get(MemorySegment.ofArray(results[0]), element, t)));
                    }
                }
            }
        } finally {
            kit.close(comms);
        }
    }

    /** Requests NCCL's proxy keeps in flight on one collComm at most. */
    public static final int IN_FLIGHT = 8;

    /**
     * Up to {@link #IN_FLIGHT} iallreduce calls of different sizes in flight at once on every
     * rank, as NCCL's proxy issues them (a null request means "retry": the rank then tests its
     * oldest request first); each completes with its own size and result, tested in issue order.
     */
    public void requestsInFlightCompleteWithTheirOwnResults() throws Exception {
        assumeDevices();
        List<Pair> pairs = supported(true);
        assumeTrue(!pairs.isEmpty(), "reduceSupport refuses every (type, op) pair: nothing to reduce");
        Pair p = pairs.contains(new Pair(DataType.INT32, ReduceOp.SUM)) ? new Pair(DataType.INT32, ReduceOp.SUM)
                : pairs.get(0);
        DataType t = p.type();
        int n = 3;
        CollComm[] comms = kit.connect(n);
        try {
            kit.onEveryRank(n, kit.settings().ruleTimeout(), rank -> {
                long[] counts = new long[IN_FLIGHT];
                MemorySegment[] send = new MemorySegment[IN_FLIGHT];
                MemorySegment[] recv = new MemorySegment[IN_FLIGHT];
                MemoryHandle[] smh = new MemoryHandle[IN_FLIGHT];
                MemoryHandle[] rmh = new MemoryHandle[IN_FLIGHT];
                for (int k = 0; k < IN_FLIGHT; k++) {
                    counts[k] = 1000L * (k + 1) * (k + 1) + k;
                    send[k] = Arena.ofAuto().allocate(counts[k] * t.size(), 64);
                    recv[k] = Arena.ofAuto().allocate(counts[k] * t.size(), 64);
                    for (long i = 0; i < counts[k]; i++) {
                        ElementCodec.put(send[k], i, t, input(p.op(), t, rank, i + 7919L * k, seed));
                    }
                    smh[k] = plugin().regMr(comms[rank], send[k], PointerType.HOST);
                    rmh[k] = plugin().regMr(comms[rank], recv[k], PointerType.HOST);
                }
                NetRequest[] reqs = new NetRequest[IN_FLIGHT];
                int[] size = new int[1];
                int oldest = 0;
                for (int k = 0; k < IN_FLIGHT; k++) {
                    Deadline d = Deadline.after(kit.settings().completionTimeout());
                    while ((reqs[k] = plugin().iallreduce(comms[rank], send[k], recv[k], counts[k], t, p.op(), smh[k],
                            rmh[k])) == null) {
                        if (oldest < k) {
                            complete(reqs[oldest], oldest, counts[oldest], t, p, size, recv[oldest], rank, n);
                            oldest++;
                        } else if (d.expired()) {
                            fail("iallreduce " + p + " returned null (would block) for " + Deadline.format(d.budget())
                                    + " with no request of this rank in flight");
                        }
                    }
                }
                for (int k = oldest; k < IN_FLIGHT; k++) {
                    complete(reqs[k], k, counts[k], t, p, size, recv[k], rank, n);
                }
                for (int k = 0; k < IN_FLIGHT; k++) {
                    plugin().deregMr(comms[rank], smh[k]);
                    plugin().deregMr(comms[rank], rmh[k]);
                }
            });
        } finally {
            kit.close(comms);
        }
    }

    private void complete(NetRequest req, int k, long count, DataType t, Pair p, int[] size, MemorySegment recv, int rank,
                          int n) throws NetException {
        String what = "request " + k + " of " + IN_FLIGHT + " in flight (iallreduce " + p + " of " + count + " elements)";
        size[0] = -1;
        kit.await(req, size, what);
        if (size[0] != count * t.size()) {
            fail(what + ": test reported " + size[0] + " bytes, this request's result has " + count * t.size()
                    + " (another request's size?)");
        }
        for (long i = 0; i < count; i++) {
            double want = expected(p.op(), t, n, i + 7919L * k, seed);
            double got = ElementCodec.get(recv, i, t);
            if (got != want) {
                fail(String.format(Locale.ROOT, "%s: element %d is %s, expected %s (seed 0x%x)", what, i, got, want, seed));
            }
        }
    }

    private NetRequest issue(CollComm comm, MemorySegment send, MemorySegment recv, long count, Pair p, MemoryHandle smh,
                             MemoryHandle rmh, String what) throws NetException {
        Deadline d = Deadline.after(kit.settings().completionTimeout());
        Backoff idle = new Backoff();
        while (true) {
            NetRequest req = plugin().iallreduce(comm, send, recv, count, p.type(), p.op(), smh, rmh);
            if (req != null) {
                return req;
            }
            if (d.expired()) {
                fail(what + ": iallreduce still returned null (would block) after " + Deadline.format(d.budget()));
            }
            idle.idle();
        }
    }
}
