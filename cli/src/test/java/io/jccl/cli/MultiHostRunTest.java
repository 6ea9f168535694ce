package io.jccl.cli;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Two hosts, each a network namespace on a virtual switch with a rate-limited link
 * ({@code bench/netns/hosts.sh}), two ranks each, started by {@code jccl run --hosts}: ranks of one
 * host share memory, ranks of different hosts go through the network. Skipped with the reason where
 * namespaces cannot be made (not root, no iproute2, a container without the capability).
 */
class MultiHostRunTest {
    private static final Path SCRIPT = Path.of("..", "bench", "netns", "hosts.sh").toAbsolutePath().normalize();
    private static final String PREFIX = "jt" + ProcessHandle.current().pid();
    private static String unavailable;

    @BeforeAll
    static void makeHosts() throws IOException, InterruptedException {
        String[] check = script("check");
        if (!check[0].equals("0")) {
            unavailable = check[1].trim();
            return;
        }
        String[] up = script("up", "2", "2gbit");
        if (!up[0].equals("0")) {
            unavailable = "hosts.sh up failed: " + up[1].trim();
        }
    }

    @AfterAll
    static void removeHosts() throws IOException, InterruptedException {
        if (unavailable == null) {
            script("down");
        }
    }

    private static String[] script(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("bash", SCRIPT.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("JCCL_NETNS_PREFIX", PREFIX);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new String[] {"timeout", out};
        }
        return new String[] {Integer.toString(p.exitValue()), out};
    }

    @Test
    void ranksShareMemoryWithinAHostAndUseTheNetworkBetweenHosts() throws Exception {
        assumeTrue(Files.isRegularFile(SCRIPT), "no " + SCRIPT);
        assumeTrue(unavailable == null, () -> "network namespaces cannot be made here: " + unavailable);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = LocalJob.run(List.of("-cp", System.getProperty("java.class.path"), HostsProbe.class.getName()), 4,
                List.of(PREFIX + "-h0", PREFIX + "-h1"), true, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, rc, o + err.toString(StandardCharsets.UTF_8));
        for (int r = 0; r < 4; r++) {
            String host = PREFIX + "-h" + (r / 2);
            assertTrue(o.contains("[rank " + r + "] probe rank=" + r + " host=" + host + " local=" + (r % 2) + "/2 sum=10 "
                    + "ring=SHM and JcclSocket"), o);
        }
    }

    /**
     * NCCL_COLLNET_ENABLE=1 between the same hosts: the first rank of each host all-reduces through
     * JcclCollNet (its aggregator a thread of rank 0), the other rank of each host through its head.
     */
    @Test
    void allReduceGoesThroughCollNetBetweenHosts() throws Exception {
        assumeTrue(Files.isRegularFile(SCRIPT), "no " + SCRIPT);
        assumeTrue(unavailable == null, () -> "network namespaces cannot be made here: " + unavailable);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = LocalJob.run(List.of("-DNCCL_COLLNET_ENABLE=1", "-DNCCL_ALGO=CollNet", "-cp",
                        System.getProperty("java.class.path"), HostsProbe.class.getName(), "collnet"), 4,
                List.of(PREFIX + "-h0", PREFIX + "-h1"), true, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String o = out.toString(StandardCharsets.UTF_8);
        assertEquals(0, rc, o + err.toString(StandardCharsets.UTF_8));
        for (int r = 0; r < 4; r++) {
            assertTrue(o.contains("[rank " + r + "] collnet rank=" + r + " algo=CollNetChain wrong=0"), o);
        }
    }

    @Test
    void aHostThatIsNoNamespaceIsRefusedInOneLine() throws Exception {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> LocalJob.run(List.of("-cp", ".", "NoSuchMain"), 2, List.of("jccl-no-such-host"), true,
                        System.out, System.err));
        assertTrue(e.getMessage().contains("jccl-no-such-host") || e.getMessage().contains("ip command"), e.getMessage());
    }
}
