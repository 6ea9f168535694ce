package io.jccl.cli;

import io.jccl.core.Communicator;
import io.jccl.core.Completion;
import io.jccl.core.JcclException;
import io.jccl.core.check.CollectiveKind;
import io.jccl.core.check.VerifiableData;
import io.jccl.cuda.Cuda;
import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.CudaStream;
import io.jccl.cuda.DeviceBuffer;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * One rank's part of {@code jccl perf}: nccl-tests' loop ({@code src/common.cu}: {@code TimeTest},
 * {@code BenchTime}). For every size: out-of-place then in-place, each with one synchronising call,
 * {@code iters} calls issued back to back and timed to the completion of the last, the time
 * averaged over ranks, then {@code check} calls on verifiable data whose wrong elements are summed
 * over ranks. Rank 0 prints the table.
 */
final class CollectivePerf {
    /** The options of one run. */
    record Options(PerfCollective collective, long minBytes, long maxBytes, long stepBytes, long stepFactor,
                   int iters, int warmup, int check, List<DataType> types, List<ReduceOp> ops, int root, boolean gpu,
                   Output output) {
    }

    /**
     * Where rank 0 writes the results besides the table.
     *
     * @param json     {@code --json}, or {@code null}
     * @param plot     {@code --plot} (SVG), or {@code null}
     * @param baseline {@code --baseline}: an earlier {@code --json} drawn beside, or {@code null}
     * @param command  the command line, recorded in the JSON
     */
    record Output(java.nio.file.Path json, java.nio.file.Path plot, java.nio.file.Path baseline, List<String> command) {
        static final Output NONE = new Output(null, null, null, List.of());
    }

    private final Communicator comm;
    private final Options o;
    private final PrintStream out;
    private final int n;
    private final int rank;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment sendBuffer;
    private final MemorySegment recvBuffer;
    private final MemorySegment expected;
    private final MemorySegment scalar;
    /** With -g 1: the buffers the collectives use, on the GPU (the host ones prepare and check the data). */
    private final DeviceBuffer deviceSend;
    private final DeviceBuffer deviceRecv;
    private final CudaStream stream;
    private final CudaDevice gpu;
    private int errors;
    private double busBwSum;
    private int busBwCount;
    private int rep;

    /** @param out where rank 0 prints; {@code null} on the other ranks */
    CollectivePerf(Communicator comm, Options options, PrintStream out) {
        this.comm = comm;
        this.o = options;
        this.out = out;
        this.n = comm.size();
        this.rank = comm.rank();
        long most = 0;
        for (DataType t : options.types()) {
            PerfCollective.Counts c = options.collective().counts(options.maxBytes(), t.size(), n);
            most = Math.max(most, Math.max(c.send(), c.recv()) * t.size());
        }
        this.sendBuffer = arena.allocate(Math.max(64, most), 4096);
        this.recvBuffer = arena.allocate(Math.max(64, most), 4096);
        this.expected = arena.allocate(Math.max(64, most), 4096);
        this.scalar = arena.allocate(8, 8);
        if (options.gpu()) {
            gpu = Cuda.device(rank % Cuda.deviceCount());
            deviceSend = gpu.allocate(sendBuffer.byteSize());
            deviceRecv = gpu.allocate(recvBuffer.byteSize());
            stream = gpu.createStream();
        } else {
            gpu = null;
            deviceSend = null;
            deviceRecv = null;
            stream = null;
        }
    }

    /**
     * Calls of the collective before the table, alternately at the smallest size and at
     * {@link #WARM_UP_BYTES}, so that the JIT has compiled the engine's paths for both: at least
     * {@link #WARM_UP_CALLS}, then rounds of about {@link #WARM_UP_ROUND_NANOS} more until, for
     * {@link #WARM_UP_QUIET_ROUNDS} rounds in a row, no rank's JIT compiled and
     * {@link #WARM_UP_MIN_NANOS} have passed, for at most {@link #WARM_UP_MAX_NANOS}.
     */
    static final int WARM_UP_CALLS = 600;
    /**
     * A round's length. A round of a fixed 200 calls took 20 ms at 8 B on 4 ranks, shorter than
     * the time a method waits between its C1 and C2 compilations there, so a round could see the
     * JIT idle while the hottest code still ran in C1: the first 2000 timed 8-byte calls after
     * such a warm-up took 316-350 us each, against 97-105 after 20 000 more calls.
     */
    static final long WARM_UP_ROUND_NANOS = 500_000_000L;
    /** Quiet rounds in a row that end the warm-up: one idle moment of the JIT is not its end. */
    static final int WARM_UP_QUIET_ROUNDS = 2;
    /**
     * The longest warm-up. Four ranks on two cores over TCP need about 15 s: their C2 threads share
     * the cores with four busy ranks, and the engine's methods wait 5 to 8 s between C1 and C2 (with
     * 10 s the table's first rows ran while the all-reduce's task was still interpreted or in C1).
     */
    static final long WARM_UP_MAX_NANOS = 45_000_000_000L;
    /**
     * The least warm-up: a small call on the calling thread takes well under a microsecond, so
     * hundreds of them end before the JIT has even queued its compilations.
     */
    static final long WARM_UP_MIN_NANOS = 300_000_000L;
    static final long WARM_UP_BYTES = 256 << 10;
    static final int WARM_UP_BURST = 20;
    private int warmUpCalls;
    private long warmUpNanos;
    /** The warm-up ended at {@link #WARM_UP_MAX_NANOS} with a rank's JIT still compiling. */
    private boolean warmUpCut;
    /** Rank 0's rows, for --json and --plot. */
    private PerfReport report;

    /** @return the number of checks that found wrong elements, the same on every rank */
    int run() {
        // The device lines' all-gather runs before the warm-up: run after it, its branches (a
        // byte all-gather) deoptimised the compiled all-reduce path (-Xlog:deoptimization showed
        // the hot path's methods sent back to the interpreter just before the table), and the
        // first rows then timed the interpreter.
        MemorySegment deviceLines = gatherDeviceLines();
        warmUpTheJit();
        printPreamble(deviceLines);
        for (DataType type : o.types()) {
            List<ReduceOp> ops = o.collective().kind.reduces() ? o.ops() : java.util.Collections.singletonList(null);
            for (ReduceOp op : ops) {
                if (o.collective().rooted() && o.root() < 0) {
                    for (int root = 0; root < n; root++) {
                        timeTest(type, op, root);
                    }
                } else {
                    timeTest(type, op, o.collective().rooted() ? o.root() : -1);
                }
            }
        }
        if (out != null) {
            out.print(PerfTable.footer(errors, busBwCount == 0 ? 0 : busBwSum / busBwCount, o.collective().program()));
            out.flush();
            Output w = o.output();
            if (w != null && (w.json() != null || w.plot() != null)) {
                try {
                    report.write(w.json(), w.plot(), w.baseline());
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException("cannot write the report: " + e.getMessage(), e);
                }
                if (w.json() != null) {
                    out.printf(java.util.Locale.ROOT, "# Wrote %s%n", w.json());
                }
                if (w.plot() != null) {
                    out.printf(java.util.Locale.ROOT, "# Wrote %s%s%n", w.plot(), w.baseline() != null ? " (beside "
                            + w.baseline() + ")" : "");
                }
            }
        }
        if (stream != null) {
            // Every rank is past its last collective: freeing GPU memory waits for no other rank.
            barrier();
            stream.close();
            deviceSend.close();
            deviceRecv.close();
        }
        arena.close();
        return errors;
    }

    /**
     * Whether HotSpot's optimizing compiler (C2) is compiling or has methods queued, from the
     * {@code Compiler.queue} diagnostic command. With more busy ranks than cores the compiler
     * threads get little time: a round can end with no compilation finished while the compiles
     * that matter wait in the queue, and the table's loop then runs (and deoptimises) the code they
     * were to replace. {@code false} where the command is not there (another JVM).
     */
    private static boolean optimizingCompilerBusy() {
        String queue;
        try {
            queue = String.valueOf(ManagementFactory.getPlatformMBeanServer().invoke(
                    new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"), "compilerQueue",
                    new Object[] {null}, new String[] {String[].class.getName()}));
        } catch (javax.management.JMException | RuntimeException e) {
            return false;
        }
        boolean inC2Queue = false;
        for (String line : queue.split("\\R")) {
            String l = line.strip();
            if (l.startsWith("C2 CompilerThread")) {
                return true; // compiling now
            }
            if (l.endsWith("compile queue:")) {
                inC2Queue = l.startsWith("C2");
            } else if (inC2Queue && !l.isEmpty() && !l.equals("Empty")) {
                return true;
            }
        }
        return false;
    }

    /**
     * nccl-tests' warm-up (a few calls per size) suits a GPU; a JVM also needs its hot paths
     * compiled before timing means anything. Not timed, not printed.
     */
    private void warmUpTheJit() {
        DataType type = o.types().get(0);
        ReduceOp op = o.ops().get(0);
        PerfCollective.Counts small = o.collective().counts(o.minBytes(), type.size(), n);
        PerfCollective.Counts large = o.collective().counts(Math.min(o.maxBytes(), WARM_UP_BYTES), type.size(), n);
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        boolean watchJit = jit != null && jit.isCompilationTimeMonitoringSupported();
        long start = System.nanoTime();
        long deadline = start + WARM_UP_MAX_NANOS;
        int calls = WARM_UP_CALLS;
        int quietRounds = 0;
        while (true) {
            long compiledBefore = watchJit ? jit.getTotalCompilationTime() : 0;
            long roundStart = System.nanoTime();
            // The timed loop's own shape (calls back to back, then a wait for the last), so that
            // the JIT compiles the path the table measures, out-of-place and in-place, both sizes.
            for (int done = 0; done < calls; done += WARM_UP_BURST) {
                int k = warmUpCalls / WARM_UP_BURST;
                issueBackToBack(k % 2 == 0 ? small : large, type, op, Math.max(0, o.root()), k % 4 < 2, WARM_UP_BURST);
                warmUpCalls += WARM_UP_BURST;
            }
            long now = System.nanoTime();
            boolean compiling = (watchJit ? jitCompiledSince(jit, compiledBefore) : optimizingCompilerBusy())
                    || now - start < WARM_UP_MIN_NANOS;
            boolean cut = now - deadline >= 0;
            // Every rank must make the same calls: go on while any rank still compiles, and agree on
            // the next round's calls (the mean of what each rank's clock asks for).
            quietRounds = sum(compiling && !cut ? 1 : 0) == 0 ? quietRounds + 1 : 0;
            if (quietRounds >= WARM_UP_QUIET_ROUNDS) { // a rank past the limit counts as quiet
                warmUpNanos = now - start;
                warmUpCut = sum(compiling ? 1 : 0) > 0;
                break;
            }
            calls = nextRoundCalls(calls, now - roundStart, WARM_UP_ROUND_NANOS, WARM_UP_BURST);
        }
    }

    /** @return every rank's "Rank r ... on host device d" line, 256 bytes each */
    private MemorySegment gatherDeviceLines() {
        String line = String.format(Locale.ROOT, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s%n", rank, 0,
                ProcessHandle.current().pid(), hostName(), gpu == null ? 0 : gpu.ordinal(),
                gpu == null ? "host" : gpu.pciBusId(), (gpu == null ? "" : gpu.name() + ", ") + comm.transport()
                        + ", ring " + comm.ringTransport());
        byte[] mine = java.util.Arrays.copyOf(line.getBytes(StandardCharsets.UTF_8), 256);
        MemorySegment local = arena.allocate(256);
        MemorySegment.copy(mine, 0, local, ValueLayout.JAVA_BYTE, 0, 256);
        MemorySegment all = arena.allocate(256L * n);
        comm.allGather(local, all, 256, DataType.UINT8);
        return all;
    }

    private void printPreamble(MemorySegment all) {
        if (out == null) {
            return;
        }
        String version = Jccl.class.getPackage().getImplementationVersion();
        out.printf(Locale.ROOT, "# jccl perf %s, in nccl-tests 2.19.6's format: %s ranks over %s, %d channel%s%n",
                version == null ? "(development build)" : version, n, comm.transport(), comm.channels(),
                comm.channels() == 1 ? "" : "s");
        out.printf(Locale.ROOT, "# Collective test starting: %s%n", o.collective().program());
        if (stream == null) {
            out.printf(Locale.ROOT, "# Protocols: %s%n", comm.protocols());
            out.printf(Locale.ROOT, "# Host memory: %s reductions, copies by %s%n", io.jccl.core.kernel.HostKernels.describe(),
                    io.jccl.core.kernel.HostCopy.describe());
        }
        report = new PerfReport(o.collective().program(), n, comm.transport() + ", ring " + comm.ringTransport(),
                comm.protocols(), o.output() == null ? List.of() : o.output().command());
        out.printf(Locale.ROOT, "# JVM warm-up: %d untimed calls of %d and %d bytes before the table, %s (%.1f s)%n",
                warmUpCalls, o.minBytes(), Math.min(o.maxBytes(), WARM_UP_BYTES), warmUpCut
                        ? "cut at the limit with the JIT still compiling: the first rows may include compilation"
                        : "until the JIT stopped compiling", warmUpNanos / 1e9);
        out.printf(Locale.ROOT, "# nThread %d nGpus %d minBytes %d maxBytes %d step: %d(%s) warmup iters: %d iters: %d "
                        + "agg iters: %d validation: %d graph: %d unalign: %d%n", 1, 1, o.minBytes(), o.maxBytes(),
                o.stepFactor() > 1 ? o.stepFactor() : o.stepBytes(), o.stepFactor() > 1 ? "factor" : "bytes", o.warmup(),
                o.iters(), 1, o.check() > 0 ? 1 : 0, 0, 0);
        out.print("#\n# Using devices\n");
        for (int r = 0; r < n; r++) {
            byte[] b = all.asSlice(256L * r, 256).toArray(ValueLayout.JAVA_BYTE);
            int len = 0;
            while (len < b.length && b[len] != 0) {
                len++;
            }
            out.print(new String(b, 0, len, StandardCharsets.UTF_8));
        }
        out.print(PerfTable.header());
        out.flush();
    }

    private void timeTest(DataType type, ReduceOp op, int root) {
        barrier();
        for (long size = o.minBytes(); size <= o.maxBytes(); size *= 2) {
            PerfCollective.Counts c = o.collective().counts(size, type.size(), n);
            // A small call takes well under a microsecond: as many untimed calls as timed ones, so
            // that the JIT's recompilations for this loop's shape end before the clock starts.
            issueBackToBack(c, type, op, root, false, size <= WARM_UP_BYTES ? Math.max(o.warmup(), o.iters())
                    : o.warmup());
            if (size == 0) {
                break;
            }
        }
        for (long size = o.minBytes(); size <= o.maxBytes();
             size = o.stepFactor() > 1 ? size * o.stepFactor() : size + o.stepBytes()) {
            PerfCollective.Counts c = o.collective().counts(size, type.size(), n);
            StringBuilder line = new StringBuilder(PerfTable.preamble(Math.max(c.send(), c.recv()) * type.size(),
                    c.param(), type.testsName(), op == null ? "none" : op.testsName(), root));
            PerfReport.Result outOfPlace = benchTime(c, type, op, root, false);
            PerfReport.Result inPlace = benchTime(c, type, op, root, true);
            String algorithm = gpu != null && o.collective().kind != CollectiveKind.ALL_TO_ALL
                    && o.collective().kind != CollectiveKind.SEND_RECV && comm.usesPeerRing()
                    ? (comm.usesPeerToPeer() ? "IpcRing" : "NetFifo") : comm.algorithmFor(o.collective().kind, size);
            for (PerfReport.Result r : new PerfReport.Result[] {outOfPlace, inPlace}) {
                line.append(PerfTable.body(r.timeUs(), r.algBw(), r.busBw(), r.wrong()));
            }
            line.append(PerfTable.algorithm(algorithm));
            if (report != null) {
                report.rows.add(new PerfReport.Row(Math.max(c.send(), c.recv()) * type.size(), c.param(), type.testsName(),
                        op == null ? "none" : op.testsName(), root, outOfPlace, inPlace, algorithm));
            }
            if (out != null) {
                out.println(line);
                out.flush();
            }
            if (size == 0 && o.stepFactor() > 1) {
                break;
            }
        }
    }

    private PerfReport.Result benchTime(PerfCollective.Counts c, DataType type, ReduceOp op, int root, boolean inPlace) {
        if (o.check() > 0) {
            prepare(c, type, op, root, inPlace, 99);
        }
        issue(c, type, op, root, inPlace).await();
        settleTheJit(c, type, op, root, inPlace);
        barrier();
        long t0 = System.nanoTime();
        issueBackToBack(c, type, op, root, inPlace, o.iters());
        double seconds = (System.nanoTime() - t0) / 1e9 / Math.max(1, o.iters());
        seconds = sum(seconds) / n;
        double algBw = o.collective().algBw(c.param(), type.size(), seconds, n);
        double busBw = algBw * o.collective().busFactor(n);
        long wrong = -1;
        if (o.check() > 0) {
            wrong = 0;
            rep++;
            for (int k = 0; k < o.check(); k++) {
                long elements = prepare(c, type, op, root, inPlace, rep);
                issue(c, type, op, root, inPlace).await();
                if (stream != null) {
                    Cuda.copy(hostRecvFor(c, type, inPlace), recvFor(c, type, inPlace));
                }
                long mine = new VerifiableData(type, op, n, rep).countWrong(hostRecvFor(c, type, inPlace), 0, expected,
                        0, elements);
                wrong = (long) sum(mine);
                if (wrong != 0) {
                    errors++;
                    break;
                }
            }
        }
        busBwSum += busBw;
        busBwCount++;
        return new PerfReport.Result(seconds * 1e6, algBw, busBw, wrong);
    }

    /**
     * Untimed calls of the row about to be timed, in rounds of about {@link #SETTLE_ROUND_NANOS},
     * while any rank's JIT compiles (for at most {@link #SETTLE_MAX_NANOS}): a size or a placement
     * the warm-up did not run can take branches its compiled code never saw, and those methods
     * then go back to the interpreter until C2 compiles them again, seconds later where ranks
     * share cores.
     */
    private void settleTheJit(PerfCollective.Counts c, DataType type, ReduceOp op, int root, boolean inPlace) {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
            return;
        }
        long start = System.nanoTime();
        int calls = 1;
        while (true) {
            long compiledBefore = jit.getTotalCompilationTime();
            long roundStart = System.nanoTime();
            issueBackToBack(c, type, op, root, inPlace, calls);
            long now = System.nanoTime();
            if (sum(jitCompiledSince(jit, compiledBefore) && now - start < SETTLE_MAX_NANOS ? 1 : 0) == 0) {
                return;
            }
            calls = nextRoundCalls(calls, now - roundStart, SETTLE_ROUND_NANOS, 1);
        }
    }

    /** @return whether the JIT compiled since {@code compiledBefore}, or has C2 work running or queued */
    private static boolean jitCompiledSince(CompilationMXBean jit, long compiledBefore) {
        return jit.getTotalCompilationTime() > compiledBefore || optimizingCompilerBusy();
    }

    /**
     * @return the calls of the next untimed round, the same on every rank: the mean over ranks of
     *         what lasts about {@code roundNanos} at the last round's pace, a multiple of {@code unit}
     */
    private int nextRoundCalls(int calls, long tookNanos, long roundNanos, int unit) {
        double perCall = (double) Math.max(1, tookNanos) / calls;
        double wanted = Math.min(1_000_000, Math.max(unit, roundNanos / perCall));
        return (int) Math.max(unit, Math.round(sum(wanted) / n / unit) * unit);
    }

    static final long SETTLE_ROUND_NANOS = 200_000_000L;
    static final long SETTLE_MAX_NANOS = 20_000_000_000L;

    /** nccl-tests' timed loop: {@code iters} calls issued back to back, then a wait for the last. */
    private void issueBackToBack(PerfCollective.Counts c, DataType type, ReduceOp op, int root, boolean inPlace,
                                 int iters) {
        // The buffers are sliced once: a slice per call would be garbage the timed loop makes, and
        // its collections would be timed too.
        MemorySegment send = sendFor(c, type, inPlace);
        MemorySegment recv = recvFor(c, type, inPlace);
        Completion last = null;
        for (int i = 0; i < iters; i++) {
            last = issue(send, recv, c, type, op, root);
        }
        if (last != null) {
            last.await();
        }
    }

    /** Fills this rank's input and expected output. @return the elements to compare */
    private long prepare(PerfCollective.Counts c, DataType type, ReduceOp op, int root, boolean inPlace, long seed) {
        VerifiableData data = new VerifiableData(type, op, n, seed);
        recvBuffer.asSlice(0, Math.max(c.send(), c.recv()) * type.size()).fill((byte) 0);
        o.collective().kind.fillInput(data, hostSendFor(c, type, inPlace), c.param(), rank, n, root);
        if (stream != null) {
            // In place, the input lies in the receive buffer, which spans the larger of the two counts.
            long span = Math.max(c.send(), c.recv()) * type.size();
            Cuda.copy(deviceRecv.segment().asSlice(0, span), recvBuffer.asSlice(0, span));
            if (!inPlace) {
                long sendBytes = c.send() * type.size();
                Cuda.copy(deviceSend.segment().asSlice(0, sendBytes), sendBuffer.asSlice(0, sendBytes));
            }
        }
        return o.collective().kind.fillExpected(data, expected, c.param(), rank, n, root);
    }

    /** The send buffer the collective uses: on the GPU with -g 1. */
    private MemorySegment sendFor(PerfCollective.Counts c, DataType type, boolean inPlace) {
        return sendSlice(c, type, inPlace, stream != null ? deviceSend.segment() : sendBuffer,
                stream != null ? deviceRecv.segment() : recvBuffer);
    }

    private MemorySegment recvFor(PerfCollective.Counts c, DataType type, boolean inPlace) {
        return recvSlice(c, type, inPlace, stream != null ? deviceRecv.segment() : recvBuffer);
    }

    /** The host buffers that hold the input before it is copied to the GPU, and the output to check. */
    private MemorySegment hostSendFor(PerfCollective.Counts c, DataType type, boolean inPlace) {
        return sendSlice(c, type, inPlace, sendBuffer, recvBuffer);
    }

    private MemorySegment hostRecvFor(PerfCollective.Counts c, DataType type, boolean inPlace) {
        return recvSlice(c, type, inPlace, recvBuffer);
    }

    private MemorySegment sendSlice(PerfCollective.Counts c, DataType type, boolean inPlace, MemorySegment send,
                                    MemorySegment recv) {
        long bytes = c.send() * type.size();
        return inPlace ? recv.asSlice(rank * c.sendInPlaceOffset() * type.size(), bytes) : send.asSlice(0, bytes);
    }

    private MemorySegment recvSlice(PerfCollective.Counts c, DataType type, boolean inPlace, MemorySegment recv) {
        long bytes = c.recv() * type.size();
        return recv.asSlice(inPlace ? rank * c.recvInPlaceOffset() * type.size() : 0, bytes);
    }

    private Completion issue(PerfCollective.Counts c, DataType type, ReduceOp op, int root, boolean inPlace) {
        return issue(sendFor(c, type, inPlace), recvFor(c, type, inPlace), c, type, op, root);
    }

    private Completion issue(MemorySegment send, MemorySegment recv, PerfCollective.Counts c, DataType type,
                             ReduceOp op, int root) {
        if (stream != null) {
            o.collective().kind.issueOnStream(comm, send, recv, c.param(), type, op, root, stream);
            return streamDone;
        }
        return o.collective().kind.issue(comm, send, recv, c.param(), type, op, root);
    }

    /** With -g 1, what waiting for the last call means: the stream has run everything queued. */
    private final Completion streamDone = new Completion() {
        @Override
        public boolean isDone() {
            return stream.isIdle();
        }

        @Override
        public void await() {
            stream.synchronize();
            JcclException e = comm.asyncError();
            if (e != null) {
                throw e;
            }
        }

        @Override
        public boolean await(java.time.Duration timeout) {
            await();
            return true;
        }

        @Override
        public JcclException error() {
            return comm.asyncError();
        }
    };

    /** @return the sum of {@code v} over ranks (nccl-tests uses MPI_Allreduce for this) */
    private double sum(double v) {
        scalar.set(ValueLayout.JAVA_DOUBLE, 0, v);
        comm.allReduce(scalar, scalar, 1, DataType.FLOAT64, ReduceOp.SUM);
        return scalar.get(ValueLayout.JAVA_DOUBLE, 0);
    }

    private void barrier() {
        sum(0);
    }

    private static String hostName() {
        String h = System.getenv("HOSTNAME");
        if (h != null && !h.isBlank()) {
            return h;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            return "localhost";
        }
    }
}
