package io.jccl.cli;

import io.jccl.core.CommConfig;
import io.jccl.core.Communicator;
import io.jccl.core.JcclException;
import io.jccl.core.UniqueId;
import io.jccl.core.config.CoreConfig;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import io.jccl.spi.config.Env;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code jccl perf <collective>}: nccl-tests on JCCL, with its flags and its table. With
 * {@code -np N} it starts N local ranks (JVMs, as {@code jccl run} does); under a launcher
 * (torchrun's, Open MPI's or Slurm's variables set) it is one rank of the job; with {@code -t T}
 * it runs T ranks as threads of this JVM. Exit status 1 if any result was wrong.
 */
@Command(name = "perf", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Benchmarks and checks a collective, printing nccl-tests' table (size, count, type, redop, "
                + "root, then time, algbw, busbw and #wrong out-of-place and in-place).",
                "Collectives: all_reduce, all_gather, broadcast, reduce, reduce_scatter, alltoall, sendrecv.",
                "Exit status: 0 if every check passed, 1 if a result was wrong, 2 on a usage or run error."})
final class PerfCommand implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "COLLECTIVE", description = "all_reduce, all_gather, broadcast, reduce, "
            + "reduce_scatter, alltoall or sendrecv (a _perf suffix is fine).")
    String collective;

    @Option(names = {"-b", "--minbytes"}, defaultValue = "32M", description = "Smallest size (default: ${DEFAULT-VALUE}).")
    String minBytes;

    @Option(names = {"-e", "--maxbytes"}, defaultValue = "32M", description = "Largest size (default: ${DEFAULT-VALUE}).")
    String maxBytes;

    @Option(names = {"-i", "--stepbytes"}, defaultValue = "1M", description = "Size increment without -f (default: ${DEFAULT-VALUE}).")
    String stepBytes;

    @Option(names = {"-f", "--stepfactor"}, defaultValue = "1", description = "Size multiplier; 1: add -i (default: ${DEFAULT-VALUE}).")
    long stepFactor;

    @Option(names = {"-n", "--iters"}, defaultValue = "20", description = "Timed calls per size (default: ${DEFAULT-VALUE}).")
    int iters;

    @Option(names = {"-w", "--warmup_iters"}, defaultValue = "1", description = "Warm-up calls per size (default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = {"-c", "--check"}, defaultValue = "1", description = "Checked calls per size; 0: no check (default: ${DEFAULT-VALUE}).")
    int check;

    @Option(names = {"-d", "--datatype"}, defaultValue = "float",
            description = "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16, or all (default: ${DEFAULT-VALUE}).")
    String datatype;

    @Option(names = {"-o", "--op"}, defaultValue = "sum", description = "sum prod max min avg, or all (default: ${DEFAULT-VALUE}).")
    String op;

    @Option(names = {"-r", "--root"}, defaultValue = "0", description = "Root of broadcast and reduce; -1: every rank (default: ${DEFAULT-VALUE}).")
    int root;

    @Option(names = {"-np", "--np"}, defaultValue = "1", description = "Local ranks to start as processes (default: ${DEFAULT-VALUE}).")
    int processes;

    @Option(names = {"-t", "--nthreads"}, defaultValue = "1", description = "Ranks as threads of this process (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--hosts", paramLabel = "NS[,NS...]", split = ",",
            description = "With -np: start the ranks in these network namespaces, one per host (bench/netns/hosts.sh), "
                    + "in blocks; shared memory inside a host, the network between hosts.")
    List<String> hosts = new ArrayList<>();

    @Option(names = {"-g", "--ngpus"}, defaultValue = "0", description = "GPUs per rank, as nccl-tests' -g: 1 puts the "
            + "buffers in GPU memory (rank r on GPU r modulo the GPUs there are) and orders the calls on a CUDA stream; "
            + "0: host memory (default: ${DEFAULT-VALUE}).")
    int gpus;

    @Option(names = "--json", paramLabel = "FILE",
            description = "Also write the results as JSON (rank 0; every row, out-of-place and in-place, with the algorithm).")
    String json;

    @Option(names = "--plot", paramLabel = "FILE.svg",
            description = "Also draw busbw against size as an SVG chart.")
    String plot;

    @Option(names = "--baseline", paramLabel = "FILE.json",
            description = "With --plot: draw this earlier --json run beside (another transport, NCCL_ALGO, build...).")
    String baseline;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        CollectivePerf.Options options;
        try {
            options = options();
        } catch (IllegalArgumentException e) {
            System.err.println("jccl perf: " + e.getMessage());
            return 2;
        }
        if (processes < 1 || threads < 1) {
            System.err.println("jccl perf: -np " + processes + " -t " + threads + ": the number of ranks (processes or "
                    + "threads) must be at least 1");
            return 2;
        }
        boolean launched = launchedRank();
        if (!launched) {
            String tooLarge = memoryCheck(options, Math.max(processes, threads));
            if (tooLarge != null) {
                System.err.println("jccl perf: " + tooLarge);
                return 2;
            }
        }
        if (processes > 1 && !launched) {
            if (threads > 1) {
                System.err.println("jccl perf: use -np (processes) or -t (threads), not both");
                return 2;
            }
            // The original arguments start with the sub-command's name.
            List<String> javaArgs = new ArrayList<>(List.of("-cp", System.getProperty("java.class.path"),
                    Jccl.class.getName()));
            javaArgs.addAll(withoutProcesses(spec.commandLine().getParseResult().originalArgs()));
            try {
                return LocalJob.run(javaArgs, processes, hosts, false, System.out, System.err);
            } catch (IllegalArgumentException e) {
                System.err.println("jccl perf: " + e.getMessage());
                return 2;
            }
        }
        try {
            if (launched) {
                try (Communicator comm = Communicator.initFromEnvironment()) {
                    return new CollectivePerf(comm, options, comm.rank() == 0 ? System.out : null).run() == 0 ? 0 : 1;
                }
            }
            return inProcess(options);
        } catch (JcclException e) {
            System.err.println("jccl perf: " + e);
            return 2;
        }
    }

    private int inProcess(CollectivePerf.Options options) throws Exception {
        int n = Math.max(1, threads);
        UniqueId id = UniqueId.create();
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<Integer>> ranks = new ArrayList<>();
            for (int r = 0; r < n; r++) {
                int rank = r;
                ranks.add(pool.submit(() -> {
                    try (Communicator comm = Communicator.init(n, id, rank, CommConfig.fromEnvironment())) {
                        return new CollectivePerf(comm, options, rank == 0 ? System.out : null).run();
                    }
                }));
            }
            int errors = 0;
            for (Future<Integer> f : ranks) {
                try {
                    errors = Math.max(errors, f.get());
                } catch (java.util.concurrent.ExecutionException e) {
                    if (e.getCause() instanceof JcclException je) {
                        throw je;
                    }
                    throw e;
                }
            }
            return errors == 0 ? 0 : 1;
        } finally {
            pool.shutdownNow();
        }
    }

    private CollectivePerf.Options options() {
        PerfCollective c = PerfCollective.parse(collective);
        long min = Env.parseBytes(minBytes);
        long max = Env.parseBytes(maxBytes);
        if (min > max) {
            throw new IllegalArgumentException("-b " + minBytes + " is larger than -e " + maxBytes);
        }
        List<DataType> types = new ArrayList<>();
        if (datatype.equalsIgnoreCase("all")) {
            for (DataType t : DataType.values()) {
                if (t != DataType.FLOAT8_E4M3 && t != DataType.FLOAT8_E5M2) {
                    types.add(t);
                }
            }
        } else {
            types.add(DataType.fromName(datatype));
        }
        List<ReduceOp> ops = op.equalsIgnoreCase("all") ? List.of(ReduceOp.values()) : List.of(ReduceOp.fromName(op));
        if (iters < 0 || warmup < 0 || check < 0 || stepFactor < 1) {
            throw new IllegalArgumentException("-n, -w and -c must not be negative, -f must be at least 1");
        }
        if (gpus < 0 || gpus > 1) {
            throw new IllegalArgumentException("-g " + gpus + ": a rank drives one GPU (-g 1) or none (-g 0)");
        }
        if (gpus == 1 && !io.jccl.cuda.Cuda.isAvailable()) {
            throw new IllegalArgumentException("-g 1 needs a GPU: " + io.jccl.cuda.Cuda.unavailabilityCause().getMessage());
        }
        return new CollectivePerf.Options(c, min, max, Math.max(1, Env.parseBytes(stepBytes)), stepFactor, iters,
                warmup, check, types, ops, root, gpus == 1, output());
    }

    /**
     * --json, --plot and --baseline, checked before any rank starts; so are the environment's
     * settings (NCCL_PROTO, NCCL_ALGO, NCCL_BUFFSIZE, ...): a bad one is one line here, not one
     * line per rank.
     */
    private CollectivePerf.Output output() {
        CommConfig.fromEnvironment();
        java.nio.file.Path jsonFile = writable("--json", json);
        java.nio.file.Path plotFile = writable("--plot", plot);
        if (plotFile != null && !plot.toLowerCase(java.util.Locale.ROOT).endsWith(".svg")) {
            throw new IllegalArgumentException("--plot " + plot + ": the chart is SVG; name a FILE.svg");
        }
        java.nio.file.Path base = null;
        if (baseline != null) {
            if (plotFile == null) {
                throw new IllegalArgumentException("--baseline " + baseline + " is drawn beside the chart: add --plot FILE.svg");
            }
            base = java.nio.file.Path.of(baseline).toAbsolutePath();
            try {
                PerfReport.read(base);
            } catch (java.io.IOException e) {
                throw new IllegalArgumentException("--baseline " + baseline + ": cannot read it (" + e.getMessage() + ")");
            }
        }
        return new CollectivePerf.Output(jsonFile, plotFile, base, spec == null ? List.of()
                : List.copyOf(spec.commandLine().getParseResult().originalArgs()));
    }

    private static java.nio.file.Path writable(String option, String file) {
        if (file == null) {
            return null;
        }
        java.nio.file.Path p = java.nio.file.Path.of(file).toAbsolutePath();
        if (!java.nio.file.Files.isDirectory(p.getParent())) {
            throw new IllegalArgumentException(option + " " + file + ": no directory " + p.getParent());
        }
        if (java.nio.file.Files.isDirectory(p)) {
            throw new IllegalArgumentException(option + " " + file + " is a directory; name a file");
        }
        return p;
    }

    /**
     * @return why the buffers of {@code ranks} local ranks cannot fit in this machine's available
     *         memory, or null: each rank holds three host buffers (send, receive, expected) of the
     *         largest size, so a run that would be killed for memory is refused before any rank starts
     */
    static String memoryCheck(CollectivePerf.Options o, int ranks) {
        long perRank = 0;
        for (DataType t : o.types()) {
            PerfCollective.Counts c = o.collective().counts(o.maxBytes(), t.size(), ranks);
            perRank = Math.max(perRank, Math.max(c.send(), c.recv()) * t.size());
        }
        long needed = 3 * perRank * ranks;
        long available = availableMemory();
        if (available > 0 && needed > available) {
            return String.format(java.util.Locale.ROOT, "-e %s with %d ranks needs %.1f GiB of host memory (3 buffers of "
                            + "%.1f GiB a rank); this machine has %.1f GiB available: use a smaller -e or fewer ranks",
                    o.maxBytes(), ranks, needed / 1073741824.0, perRank / 1073741824.0, available / 1073741824.0);
        }
        return null;
    }

    /** @return MemAvailable of /proc/meminfo in bytes, or 0 if unknown */
    private static long availableMemory() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemAvailable:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }

    private static boolean launchedRank() {
        return Env.isSet(CoreConfig.RANK) && Env.isSet(CoreConfig.WORLD_SIZE)
                || Env.isSet(CoreConfig.OMPI_COMM_WORLD_RANK) && Env.isSet(CoreConfig.OMPI_COMM_WORLD_SIZE)
                || Env.isSet(CoreConfig.SLURM_PROCID) && Env.isSet(CoreConfig.SLURM_NTASKS);
    }

    /** The original arguments without {@code -np N}, for the ranks this command starts. */
    static List<String> withoutProcesses(List<String> args) {
        List<String> kept = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("-np") || a.equals("--np")) {
                i++;
            } else if (!a.startsWith("-np=") && !a.startsWith("--np=")) {
                kept.add(a);
            }
        }
        return kept;
    }
}
