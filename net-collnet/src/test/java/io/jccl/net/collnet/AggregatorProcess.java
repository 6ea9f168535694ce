package io.jccl.net.collnet;

import io.jccl.spi.NetLogger;

import java.net.InetSocketAddress;
import java.util.HexFormat;

/**
 * An aggregator process for {@link CollNetFailureTest} (what {@code jccl collnet-aggregator} runs):
 * serves on a free loopback port with the key given as {@code args[0]}, prints the port, and runs
 * until it is killed.
 */
public final class AggregatorProcess {
    private AggregatorProcess() {
    }

    public static void main(String[] args) throws Exception {
        try (Aggregator a = Aggregator.serve(new InetSocketAddress("127.0.0.1", 0), HexFormat.of().parseHex(args[0]),
                NetLogger.noop())) {
            System.out.println(a.address().getPort());
            System.out.flush();
            Thread.currentThread().join();
        }
    }
}
