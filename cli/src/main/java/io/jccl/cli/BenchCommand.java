package io.jccl.cli;

import io.jccl.bench.BridgeBenchmark;
import io.jccl.bench.IoEngineComparison;
import io.jccl.nativenet.NativeNetPlugin;
import io.jccl.nativenet.NativePluginLibrary;
import io.jccl.bench.NetBenchmark;
import io.jccl.bench.RawSocketBaseline;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.config.Env;
import io.jccl.spi.discovery.NetPluginDiscovery;
import io.jccl.spi.log.DebugLogger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code jccl bench}: benchmarks that print JCCL's figures beside a baseline measured in the same run.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmarks with a baseline measured in the same run.",
        subcommands = {BenchCommand.Net.class, BenchCommand.IoEngines.class, BenchCommand.Bridge.class,
                BenchCommand.Kernels.class, BenchCommand.Reductions.class})
final class BenchCommand {

    /** {@code jccl bench net}: one connection of a transport against a raw TCP socket pair. */
    @Command(name = "net", mixinStandardHelpOptions = true,
            description = {"One connection's throughput and ping-pong latency of a transport, beside a raw "
                    + "socket pair (blocking SocketChannel, direct buffers) over the same address, in the same run.",
                    "Sender and receiver run on their own threads; each keeps --depth requests in flight, each in its own "
                    + "buffer, and the raw pair walks through as many buffers, so both touch the same memory."})
    static final class Net implements Callable<Integer> {
        @Option(names = "--net", paramLabel = "NAME", defaultValue = "JcclSocket",
                description = "Transport to measure (default: ${DEFAULT-VALUE}).")
        String name;

        @Option(names = "--sizes", split = ",", paramLabel = "SIZE", defaultValue = "64K,1M,4M,64M",
                description = "Message sizes (default: ${DEFAULT-VALUE}).")
        List<String> sizes;

        @Option(names = "--depth", defaultValue = "8", description = "Requests in flight (default: ${DEFAULT-VALUE}).")
        int depth;

        @Option(names = "--bytes", defaultValue = "2G", description = "Bytes per run and size (default: ${DEFAULT-VALUE}).")
        String bytes;

        @Option(names = "--repeat", defaultValue = "3",
                description = "Runs per size and side, alternating; the best is kept (default: ${DEFAULT-VALUE}).")
        int repeat;

        @Option(names = "--latency-iterations", defaultValue = "20000",
                description = "Ping-pongs measured (default: ${DEFAULT-VALUE}).")
        int latencyIterations;

        @Option(names = "--latency-sizes", split = ",", paramLabel = "SIZE", defaultValue = "8",
                description = "Ping-pong message sizes (default: ${DEFAULT-VALUE}); beyond the inline limit a message "
                        + "goes through the I/O threads, whose hand-offs show here and not in throughput.")
        List<String> latencySizes;

        @Option(names = "--layouts", split = ",", paramLabel = "TxS",
                description = "Also sweep stream layouts: NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD, e.g. 0x1,1x1,2x2.")
        List<String> layouts = new ArrayList<>();

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            long total = Env.parseBytes(bytes);
            List<String> runs = layouts.isEmpty() ? List.of("") : layouts;
            for (String layout : runs) {
                NetPlugin net = open(name, layout);
                String label = layout.isEmpty() ? name : name + " " + layout;
                out.printf(Locale.ROOT, "# %s vs raw socket, one connection, depth %d, best of %d, same run%n", label,
                        depth, repeat);
                out.printf(Locale.ROOT, "# %12s %12s %14s %8s%n", "size (B)", "raw GB/s", name + " GB/s", "ratio");
                try (RawSocketBaseline raw = new RawSocketBaseline(); NetBenchmark bench = new NetBenchmark(net)) {
                    for (String sizeText : sizes) {
                        int size = (int) Env.parseBytes(sizeText);
                        long messages = Math.max(16, total / size);
                        int d = (int) Math.max(2, Math.min(depth, (512L << 20) / size));
                        bench.throughputGBps(size, d, Math.max(4, messages / 8));
                        raw.throughputGBps(size, d, Math.max(4, messages / 8));
                        double bestRaw = 0;
                        double bestNet = 0;
                        for (int r = 0; r < repeat; r++) {
                            bestRaw = Math.max(bestRaw, raw.throughputGBps(size, d, messages));
                            bestNet = Math.max(bestNet, bench.throughputGBps(size, d, messages));
                        }
                        out.printf(Locale.ROOT, "  %12d %12.2f %14.2f %8.2f%n", size, bestRaw, bestNet, bestNet / bestRaw);
                        out.flush();
                    }
                    for (String sizeText : latencySizes) {
                        int size = (int) Env.parseBytes(sizeText);
                        // fewer round trips of large messages: about a second each side
                        int iterations = (int) Math.max(200, Math.min(latencyIterations, (2L << 30) / Math.max(size, 1) / 8));
                        double rawLat = raw.pingPongMicros(size, iterations, iterations / 4);
                        double netLat = bench.pingPongMicros(size, iterations, iterations / 4);
                        out.printf(Locale.ROOT, "# %d-byte ping-pong, median one-way latency: raw %.2f us, %s %.2f us, "
                                + "ratio %.2f%n", size, rawLat, name, netLat, netLat / rawLat);
                        out.flush();
                    }
                    for (String sizeText : latencySizes) {
                        int size = (int) Env.parseBytes(sizeText);
                        int iterations = (int) Math.max(200, Math.min(latencyIterations, (2L << 30) / Math.max(size, 1) / 8));
                        double bestRaw = Double.MAX_VALUE;
                        double bestNet = Double.MAX_VALUE;
                        for (int r = 0; r < repeat; r++) {
                            bestRaw = Math.min(bestRaw, raw.oneThreadNanos(size, iterations, iterations / 4));
                            bestNet = Math.min(bestNet, bench.oneThreadNanos(size, iterations, iterations / 4));
                        }
                        out.printf(Locale.ROOT, "# %d-byte message on one thread (no scheduler: the calls' own cost): raw "
                                + "write and read %.0f ns, %s isend, irecv and tests %.0f ns, ratio %.2f%n", size, bestRaw,
                                name, bestNet, bestNet / bestRaw);
                        out.flush();
                    }
                    out.println();
                } finally {
                    net.close();
                }
            }
            return 0;
        }

        private static NetPlugin open(String name, String layout) throws NetException {
            if (!layout.isEmpty()) {
                String[] tp = layout.toLowerCase(Locale.ROOT).split("x");
                System.setProperty("NCCL_SOCKET_NTHREADS", tp[0]);
                System.setProperty("NCCL_NSOCKS_PERTHREAD", tp[1]);
            }
            try {
                return NetPluginDiscovery.load().selectNet(name, DebugLogger.fromEnvironment()).plugin();
            } finally {
                System.clearProperty("NCCL_SOCKET_NTHREADS");
                System.clearProperty("NCCL_NSOCKS_PERTHREAD");
            }
        }
    }

    /** {@code jccl bench kernels}: the GPU reduction kernel against a device-to-device copy. */
    @Command(name = "kernels", mixinStandardHelpOptions = true,
            description = "Memory bandwidth of the GPU reduction kernel (sum, every type) against a device-to-device "
                    + "copy on the same GPU, same run. Needs a GPU and NVRTC; says why not where they are missing.")
    static final class Kernels implements Callable<Integer> {
        @Option(names = "--bytes", defaultValue = "512M", description = "Bytes per buffer (default: ${DEFAULT-VALUE}).")
        String bytes;

        @Option(names = "--repeat", defaultValue = "10", description = "Runs per figure; the best is kept.")
        int repeat;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() {
            io.jccl.bench.KernelBandwidth.run(spec.commandLine().getOut(), Env.parseBytes(bytes),
                    List.of(io.jccl.spi.DataType.values()), repeat);
            return 0;
        }
    }

    /** {@code jccl bench reductions}: the host reduction kernels against a memory copy, under JMH. */
    @Command(name = "reductions", mixinStandardHelpOptions = true,
            description = {"JMH: the host reduction kernel JCCL uses (the Vector API where the JVM has it; native "
                    + "code for float16 and bfloat16 where the CPU has AVX2 and F16C, at AVX-512 F and BW, then VBMI2, then "
                    + "FP16, where it has those; JCCL_HOST_HALF_FLOATS=avx2, avx512 or avx512_vbmi2 for a lower level as a baseline), that kernel without native code "
                    + "(Java), and the scalar one, d = a + b, against MemorySegment.copy of the same bytes, same run; from 8 MiB the "
                    + "kernel streams its stores past the caches (JCCL_HOST_STREAM_STORES=off for the baseline without). Bandwidth counts "
                    + "the bytes moved: 3 per element byte for a reduction (two reads, a write), 2 for a copy.",
                    "Each figure is JMH's mean over its measurement iterations, in a forked JVM."})
    static final class Reductions implements Callable<Integer> {
        @Option(names = "--types", split = ",", defaultValue = "int8,int32,float32,float64,float16,bfloat16",
                description = "Types (default: ${DEFAULT-VALUE}).")
        List<String> types;

        @Option(names = "--sizes", split = ",", defaultValue = "256K,64M",
                description = "Bytes per buffer (default: ${DEFAULT-VALUE}: in cache and in memory).")
        List<String> sizes;

        @Option(names = "--iterations", defaultValue = "3", description = "Measurement iterations of 500 ms.")
        int iterations;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            java.util.List<String> byteCounts = new java.util.ArrayList<>();
            for (String size : sizes) {
                byteCounts.add(Long.toString(Env.parseBytes(size)));
            }
            org.openjdk.jmh.runner.options.Options options = new org.openjdk.jmh.runner.options.OptionsBuilder()
                    .include(io.jccl.bench.ReductionBenchmark.class.getName())
                    .param("type", types.toArray(new String[0]))
                    .param("bytes", byteCounts.toArray(new String[0]))
                    .jvmArgsAppend("--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector")
                    .forks(1)
                    .warmupIterations(2).warmupTime(org.openjdk.jmh.runner.options.TimeValue.milliseconds(500))
                    .measurementIterations(iterations)
                    .measurementTime(org.openjdk.jmh.runner.options.TimeValue.milliseconds(500))
                    .verbosity(org.openjdk.jmh.runner.options.VerboseMode.SILENT)
                    .build();
            java.util.Map<String, double[]> micros = new java.util.TreeMap<>();
            for (org.openjdk.jmh.results.RunResult r : new org.openjdk.jmh.runner.Runner(options).run()) {
                String type = r.getParams().getParam("type");
                String bytes = r.getParams().getParam("bytes");
                String method = r.getParams().getBenchmark().substring(r.getParams().getBenchmark().lastIndexOf('.') + 1);
                int column = switch (method) {
                    case "copy" -> 0;
                    case "vector" -> 1;
                    case "java" -> 2;
                    default -> 3;
                };
                micros.computeIfAbsent(String.format(Locale.ROOT, "%-9s %12s", type, bytes), k -> new double[4])[column] =
                        r.getPrimaryResult().getScore();
            }
            out.println("# host reduction kernel: " + io.jccl.core.kernel.HostKernels.describe()
                    + " (in the forked JVM: --add-modules jdk.incubator.vector)");
            out.printf(Locale.ROOT, "# %-9s %12s %10s %12s %7s %12s %7s %12s %7s%n", "type", "bytes", "copy GB/s",
                    "kernel GB/s", "ratio", "Java GB/s", "ratio", "scalar GB/s", "ratio");
            for (java.util.Map.Entry<String, double[]> e : micros.entrySet()) {
                long bytes = Long.parseLong(e.getKey().substring(10).trim());
                double copy = 2.0 * bytes / (e.getValue()[0] * 1e3);
                double kernel = 3.0 * bytes / (e.getValue()[1] * 1e3);
                double java = 3.0 * bytes / (e.getValue()[2] * 1e3);
                double scalar = 3.0 * bytes / (e.getValue()[3] * 1e3);
                out.printf(Locale.ROOT, "  %s %10.2f %12.2f %7.2f %12.2f %7.2f %12.2f %7.2f%n", e.getKey(), copy, kernel,
                        kernel / copy, java, java / copy, scalar, scalar / copy);
            }
            return 0;
        }
    }

    /** {@code jccl bench io-engines}: NIO non-blocking channels against Netty's native epoll. */
    @Command(name = "io-engines", mixinStandardHelpOptions = true,
            description = "Throughput and ping-pong latency of the I/O engines a socket transport can use, over one "
                    + "TCP connection: NIO non-blocking channels with spinning threads, and Netty's native epoll.")
    static final class IoEngines implements Callable<Integer> {
        @Option(names = "--sizes", split = ",", defaultValue = "64K,1M,4M", description = "Message sizes.")
        List<String> sizes;

        @Option(names = "--bytes", defaultValue = "2G", description = "Bytes per run and size.")
        String bytes;

        @Option(names = "--repeat", defaultValue = "3", description = "Runs per size and engine; the best is kept.")
        int repeat;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            out.println("# Netty native epoll: " + IoEngineComparison.nettyEpollStatus());
            out.printf(Locale.ROOT, "# %12s %14s %14s %16s %8s%n", "size (B)", "raw GB/s", "NIO GB/s", "Netty epoll GB/s",
                    "N/NIO");
            long total = Env.parseBytes(bytes);
            try (RawSocketBaseline raw = new RawSocketBaseline()) {
                for (String s : sizes) {
                    int size = (int) Env.parseBytes(s);
                    long messages = Math.max(16, total / size);
                    double r = 0;
                    double nio = 0;
                    double netty = 0;
                    IoEngineComparison.nioThroughputGBps(size, messages / 8);
                    IoEngineComparison.nettyThroughputGBps(size, messages / 8, 8);
                    for (int i = 0; i < repeat; i++) {
                        r = Math.max(r, raw.throughputGBps(size, messages));
                        nio = Math.max(nio, IoEngineComparison.nioThroughputGBps(size, messages));
                        netty = Math.max(netty, IoEngineComparison.nettyThroughputGBps(size, messages, 8));
                    }
                    out.printf(Locale.ROOT, "  %12d %14.2f %14.2f %16.2f %8.2f%n", size, r, nio, netty, netty / nio);
                    out.flush();
                }
                double rawLat = raw.pingPongMicros(8, 20_000, 5_000);
                double nioLat = IoEngineComparison.nioPingPongMicros(8, 20_000, 5_000);
                double nettyLat = IoEngineComparison.nettyPingPongMicros(8, 20_000, 5_000);
                out.printf(Locale.ROOT, "# 8-byte ping-pong, median one-way: raw %.2f us, NIO %.2f us, Netty epoll %.2f us%n",
                        rawLat, nioLat, nettyLat);
            }
            return 0;
        }
    }

    /** {@code jccl bench bridge}: what a call costs through the native shim, against the same call in Java. */
    @Command(name = "bridge", mixinStandardHelpOptions = true,
            description = {"Per-call cost of the native shim: test() of a pending receive, iflush() of host memory "
                    + "(no work for the transport) and an 8-byte isend/irecv/test round, on one transport, made "
                    + "directly in Java (the baseline), from C as NCCL makes them (the shim's C driver, in its own "
                    + "process and JVM), and from Java through the native host and the shim (two crossings).",
                    "Best of --repeat runs, in the same run."})
    static final class Bridge implements Callable<Integer> {
        @Option(names = "--net", paramLabel = "NAME", defaultValue = "JcclSocket",
                description = "Java transport (default: ${DEFAULT-VALUE}); the shim runs the same one.")
        String name;

        @Option(names = "--library", paramLabel = "PATH",
                description = "The shim (default: libnccl-net.so beside the launcher's jars).")
        Path library;

        @Option(names = "--driver", paramLabel = "PATH",
                description = "The shim's C driver, jccl-shim-driver (plugins/shim/target/native); without it the C "
                        + "column is left out.")
        Path driver;

        @Option(names = "--iterations", defaultValue = "200000", description = "Calls per figure (default: ${DEFAULT-VALUE}).")
        long iterations;

        @Option(names = "--repeat", defaultValue = "3", description = "Runs per path; the best is kept (default: ${DEFAULT-VALUE}).")
        int repeat;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            PrintWriter out = spec.commandLine().getOut();
            Path lib = library != null ? library.toAbsolutePath() : besideJars("libnccl-net.so");
            NetPlugin direct = NetPluginDiscovery.load().netPlugins().stream()
                    .filter(p -> p.name().equalsIgnoreCase(name) && !(p instanceof NativeNetPlugin)).findFirst()
                    .orElseThrow(() -> NetException.invalidUsage("no Java transport named " + name));
            direct.init(DebugLogger.fromEnvironment());
            NativeNetPlugin bridged = NativePluginLibrary.open(lib.toString()).netPlugin()
                    .orElseThrow(() -> NetException.invalidUsage(lib + " exports no ncclNet"));
            if (!bridged.name().equalsIgnoreCase(name)) {
                throw NetException.invalidUsage(lib + " exports " + bridged.name() + " in this process; start it with "
                        + "JCCL_SHIM_NET=" + name);
            }
            bridged.init(DebugLogger.fromEnvironment());
            BridgeBenchmark.Costs javaCosts = null;
            BridgeBenchmark.Costs hostCosts = null;
            BridgeBenchmark.Costs driverCosts = null;
            for (int r = 0; r < repeat; r++) {
                javaCosts = BridgeBenchmark.measure(direct, iterations).best(javaCosts);
                hostCosts = BridgeBenchmark.measure(bridged, iterations).best(hostCosts);
                if (driver != null) {
                    // The driver starts its own JVM through the shim: this JVM's JDK unless one is configured.
                    String jdk = Env.get("JCCL_JAVA_HOME", System.getProperty("java.home"));
                    driverCosts = BridgeBenchmark.fromDriver(driver, lib, iterations,
                            Map.of("JCCL_SHIM_NET", name, "JCCL_JAVA_HOME", jdk)).best(driverCosts);
                }
            }
            out.printf(Locale.ROOT, "# %s, loopback, one thread; best of 5 rounds of %d calls (pairs: %d), best of %d "
                    + "runs, same run; ns per call%n", name, iterations, Math.max(1, iterations / 10), repeat);
            out.printf(Locale.ROOT, "# %-44s %12s %12s %16s%n", "path", "test()", "iflush()", "isend+irecv+test");
            row(out, "Java -> " + name + " (baseline)", javaCosts, null);
            if (driverCosts != null) {
                row(out, "C, as NCCL -> shim -> " + name, driverCosts, javaCosts);
            }
            row(out, "Java -> native host -> shim -> " + name, hostCosts, javaCosts);
            out.println("# the shim's own cost per call is the C row minus the baseline; iflush() isolates it "
                    + "(the transport does nothing there)");
            bridged.close();
            direct.close();
            return 0;
        }

        private static void row(PrintWriter out, String path, BridgeBenchmark.Costs c, BridgeBenchmark.Costs base) {
            out.printf(Locale.ROOT, "  %-44s %12.1f %12.1f %16.1f%s%n", path, c.testNs(), c.iflushNs(), c.pairNs(),
                    base == null ? "" : String.format(Locale.ROOT, "   (+%.0f, +%.0f, +%.0f)", c.testNs() - base.testNs(),
                            c.iflushNs() - base.iflushNs(), c.pairNs() - base.pairNs()));
        }

        private static Path besideJars(String file) throws Exception {
            Path jar = Path.of(NativePluginLibrary.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path candidate = (Files.isDirectory(jar) ? jar : jar.getParent()).resolve(file);
            if (!Files.isRegularFile(candidate)) {
                throw NetException.invalidUsage("no " + file + " beside " + jar + "; pass --library");
            }
            return candidate;
        }
    }
}
