package io.jccl.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Hosts that are network namespaces of this machine ({@code bench/netns/hosts.sh}): their address,
 * asked of {@code ip}. {@code jccl run --hosts} starts ranks in them with {@code ip netns exec}.
 */
final class NetnsHosts {
    private NetnsHosts() {
    }

    /**
     * @return the first IPv4 address of {@code namespace} that is not loopback
     * @throws IllegalArgumentException if there is no such namespace, or it has no address
     */
    static String address(String namespace) throws IOException, InterruptedException {
        String out = run("ip", "-n", namespace, "-4", "-o", "addr", "show");
        for (String line : out.lines().toList()) {
            String[] f = line.trim().split("\\s+");
            for (int i = 0; i + 1 < f.length; i++) {
                if (f[i].equals("inet") && !f[i + 1].startsWith("127.")) {
                    return f[i + 1].substring(0, f[i + 1].indexOf('/'));
                }
            }
        }
        throw new IllegalArgumentException("network namespace " + namespace + " has no IPv4 address besides loopback");
    }

    private static String run(String... command) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(List.of(command)).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IllegalArgumentException("--hosts needs iproute2's ip command: " + e.getMessage(), e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalArgumentException(String.join(" ", command) + " did not answer within 10 s");
        }
        if (p.exitValue() != 0) {
            throw new IllegalArgumentException("no network namespace " + command[2] + " here (" + out.trim()
                    + "); bench/netns/hosts.sh up N makes hosts jccl-h0 .. jccl-h(N-1)");
        }
        return out;
    }
}
