package io.jccl.cli;

import io.jccl.bench.IoEngineComparison;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code jccl bench}: benchmarks that print JCCL's figures beside a baseline measured in the same run.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Benchmarks with a baseline measured in the same run.",
        subcommands = {BenchCommand.Net.class, BenchCommand.IoEngines.class})
final class BenchCommand {

    /** {@code jccl bench net}: one connection of a transport against a raw TCP socket pair. */
    @Command(name = "net", mixinStandardHelpOptions = true,
            description = {"One connection's throughput and 8-byte ping-pong latency of a transport, beside a raw "
                    + "socket pair (blocking SocketChannel, direct buffers) over the same address, in the same run.",
                    "Sender and receiver run on their own threads; each keeps --depth requests in flight."})
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
                        raw.throughputGBps(size, Math.max(4, messages / 8));
                        double bestRaw = 0;
                        double bestNet = 0;
                        for (int r = 0; r < repeat; r++) {
                            bestRaw = Math.max(bestRaw, raw.throughputGBps(size, messages));
                            bestNet = Math.max(bestNet, bench.throughputGBps(size, d, messages));
                        }
                        out.printf(Locale.ROOT, "  %12d %12.2f %14.2f %8.2f%n", size, bestRaw, bestNet, bestNet / bestRaw);
                        out.flush();
                    }
                    double rawLat = raw.pingPongMicros(8, latencyIterations, latencyIterations / 4);
                    double netLat = bench.pingPongMicros(8, latencyIterations, latencyIterations / 4);
                    out.printf(Locale.ROOT, "# 8-byte ping-pong, median one-way latency: raw %.2f us, %s %.2f us, "
                            + "ratio %.2f%n%n", rawLat, name, netLat, netLat / rawLat);
                    out.flush();
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
}
