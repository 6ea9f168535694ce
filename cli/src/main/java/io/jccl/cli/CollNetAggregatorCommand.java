package io.jccl.cli;

import io.jccl.net.collnet.Aggregator;
import io.jccl.net.collnet.CollNetConfig;
import io.jccl.spi.config.Env;
import io.jccl.spi.log.DebugLogger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.Callable;

/**
 * {@code jccl collnet-aggregator}: JcclCollNet's aggregation service as a process of its own, the
 * software switch that ranks reach with {@code JCCL_COLLNET_AGGREGATOR=host:port}.
 */
@Command(name = "collnet-aggregator",
        mixinStandardHelpOptions = true,
        description = {"Runs JcclCollNet's aggregator (the switch of in-network reduction) until stopped: ranks with "
                + "JCCL_COLLNET_AGGREGATOR=HOST:PORT and the same JCCL_COLLNET_SECRET send it their data, and it "
                + "reduces and returns it, for any number of groups. Its JCCL_COLLNET_CHUNK_BYTES and "
                + "JCCL_COLLNET_WINDOW hold for its groups.",
                "Prints where it listens and, when JCCL_COLLNET_SECRET is unset, the key it made (an export line)."})
final class CollNetAggregatorCommand implements Callable<Integer> {
    @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "0.0.0.0",
            description = "Address to listen on (default: ${DEFAULT-VALUE}, every interface).")
    private String bind;

    @Option(names = {"-p", "--port"}, paramLabel = "PORT", defaultValue = "0",
            description = "Port to listen on (default: any free one, printed).")
    private int port;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() throws IOException, InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port " + port + " is outside 0..65535");
        }
        String hex = Env.get(CollNetConfig.JCCL_COLLNET_SECRET);
        byte[] secret;
        if (hex == null) {
            secret = new byte[16];
            new SecureRandom().nextBytes(secret);
            hex = HexFormat.of().formatHex(secret);
            out.println("export " + CollNetConfig.JCCL_COLLNET_SECRET + "=" + hex);
        } else {
            secret = CollNetConfig.parseSecret(hex);
        }
        try (Aggregator a = Aggregator.serve(new InetSocketAddress(bind, port), secret,
                DebugLogger.fromEnvironment("[aggregator]"))) {
            InetSocketAddress at = a.address();
            out.println("JcclCollNet aggregator listening on " + at.getHostString() + ":" + at.getPort());
            out.flush();
            Thread.currentThread().join();
        }
        return 0;
    }
}
