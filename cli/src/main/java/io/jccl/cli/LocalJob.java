package io.jccl.cli;

import io.jccl.core.config.CoreConfig;
import io.jccl.spi.config.Env;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * N JVMs on this machine, each one rank, started with the variables torchrun would set:
 * {@code RANK}, {@code WORLD_SIZE}, {@code LOCAL_RANK}, {@code LOCAL_WORLD_SIZE},
 * {@code MASTER_ADDR}, {@code MASTER_PORT}, plus a random {@code JCCL_COMM_SECRET}. Their output
 * comes back line by line with a {@code [rank N]} prefix. When a rank fails, the others get a
 * grace period to notice it themselves (JCCL fails their operations within the peer timeout), and
 * are then stopped; in an elastic job ({@link Elastic}) they go on, and a rank that dies may be
 * started again to rejoin.
 */
final class LocalJob {
    /** How long the other ranks may run after one failed, before they are stopped. */
    static final long GRACE_MS = 20_000;

    private LocalJob() {
    }

    /**
     * What an elastic job does when a rank exits with a non-zero status: the others go on (they
     * shrink their communicator), and with {@code respawns > 0} a new process takes the dead
     * rank's place, with {@code JCCL_ELASTIC_JOIN=1}, up to {@code respawns} times in all.
     *
     * @param enabled  {@code --elastic}
     * @param respawns {@code --respawn N}
     */
    record Elastic(boolean enabled, int respawns) {
        static final Elastic OFF = new Elastic(false, 0);
    }

    /**
     * @param javaArgs         what follows {@code java <options>}: class path, main class, arguments
     * @param ranks            how many ranks
     * @param prefixRankZero   whether rank 0's standard output is prefixed too
     * @return the first non-zero exit status of a rank, or 0
     */
    static int run(List<String> javaArgs, int ranks, boolean prefixRankZero, PrintStream out, PrintStream err)
            throws IOException, InterruptedException {
        return run(javaArgs, ranks, List.of(), prefixRankZero, out, err);
    }

    /**
     * @param hosts network namespaces standing for hosts ({@code bench/netns/hosts.sh up N} makes
     *              them), ranks placed in blocks ({@code ranks / hosts} consecutive ranks a host), each
     *              host its own {@code NCCL_HOSTID} (shared memory inside, the network between), rank 0's
     *              host address the {@code MASTER_ADDR}; empty: every rank here, on loopback
     * @throws IllegalArgumentException if a host is not a network namespace here
     */
    static int run(List<String> javaArgs, int ranks, List<String> hosts, boolean prefixRankZero, PrintStream out,
                   PrintStream err) throws IOException, InterruptedException {
        return run(javaArgs, ranks, hosts, prefixRankZero, Elastic.OFF, out, err);
    }

    /**
     * @param elastic what a rank's death does to the job
     * @return without {@code elastic}: the first non-zero exit status of a rank, or 0; with it:
     *         the first non-zero status of the ranks that lasted (each rank's last process; a dead
     *         rank that was not replaced does not count, unless every rank died), or 0
     */
    static int run(List<String> javaArgs, int ranks, List<String> hosts, boolean prefixRankZero, Elastic elastic,
                   PrintStream out, PrintStream err) throws IOException, InterruptedException {
        String master = InetAddress.getLoopbackAddress().getHostAddress();
        if (!hosts.isEmpty()) {
            master = NetnsHosts.address(hosts.get(0));
        }
        String secret = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
        int port = freePort();
        List<Process> processes = new ArrayList<>();
        List<ProcessBuilder> builders = new ArrayList<>();
        List<Thread> pumps = new ArrayList<>();
        Path elasticDir = elastic.enabled() ? java.nio.file.Files.createTempDirectory("jccl-elastic-") : null;
        Thread stopAll = new Thread(() -> processes.forEach(Process::destroyForcibly), "jccl-run-stop");
        Runtime.getRuntime().addShutdownHook(stopAll);
        try {
            for (int r = 0; r < ranks; r++) {
                List<String> command = new ArrayList<>();
                int host = hosts.isEmpty() ? 0 : (int) ((long) r * hosts.size() / ranks);
                int first = hosts.isEmpty() ? 0 : firstRankOf(host, hosts.size(), ranks);
                int onHost = hosts.isEmpty() ? ranks : firstRankOf(host + 1, hosts.size(), ranks) - first;
                if (!hosts.isEmpty()) {
                    command.addAll(List.of("ip", "netns", "exec", hosts.get(host)));
                }
                command.addAll(javaCommand());
                command.addAll(javaArgs);
                ProcessBuilder pb = new ProcessBuilder(command);
                Map<String, String> env = pb.environment();
                env.put(CoreConfig.RANK, String.valueOf(r));
                env.put(CoreConfig.WORLD_SIZE, String.valueOf(ranks));
                env.put("LOCAL_RANK", String.valueOf(r - first));
                env.put("LOCAL_WORLD_SIZE", String.valueOf(onHost));
                if (!hosts.isEmpty()) {
                    env.put(CoreConfig.NCCL_HOSTID, hosts.get(host));
                }
                env.put(CoreConfig.MASTER_ADDR, master);
                env.put(CoreConfig.MASTER_PORT, String.valueOf(port));
                env.put(CoreConfig.JCCL_COMM_SECRET, secret);
                env.remove(CoreConfig.NCCL_COMM_ID);
                env.remove(CliConfig.JCCL_ELASTIC_JOIN);
                if (elasticDir != null) {
                    env.put(CliConfig.JCCL_ELASTIC_DIR, elasticDir.toString());
                }
                Process p = pb.start();
                builders.add(pb);
                processes.add(p);
                String prefix = "[rank " + r + "] ";
                pumps.add(pump(p.getInputStream(), out, r == 0 && !prefixRankZero ? "" : prefix));
                pumps.add(pump(p.getErrorStream(), err, prefix));
            }
            int status = 0;
            long failedAt = 0;
            boolean[] dead = new boolean[ranks];
            int respawned = 0;
            while (true) {
                boolean running = false;
                for (int r = 0; r < ranks; r++) {
                    Process p = processes.get(r);
                    if (p.isAlive()) {
                        running = true;
                    } else if (p.exitValue() != 0 && elastic.enabled() && !dead[r]) {
                        dead[r] = true;
                        if (respawned < elastic.respawns()) {
                            respawned++;
                            err.println("jccl run: rank " + r + " exited with status " + p.exitValue()
                                    + "; --elastic: the others go on, and a new process joins in its place ("
                                    + respawned + " of " + elastic.respawns() + ")");
                            ProcessBuilder pb = builders.get(r);
                            pb.environment().put(CliConfig.JCCL_ELASTIC_JOIN, "1");
                            Process again = pb.start();
                            processes.set(r, again);
                            pumps.add(pump(again.getInputStream(), out, "[rank " + r + "'] "));
                            pumps.add(pump(again.getErrorStream(), err, "[rank " + r + "'] "));
                            dead[r] = false;
                            running = true;
                        } else {
                            err.println("jccl run: rank " + r + " exited with status " + p.exitValue()
                                    + "; --elastic: the others go on");
                        }
                    } else if (p.exitValue() != 0 && !elastic.enabled() && status == 0) {
                        status = p.exitValue();
                        failedAt = System.nanoTime();
                    }
                }
                if (!running) {
                    break;
                }
                if (status != 0 && System.nanoTime() - failedAt > TimeUnit.MILLISECONDS.toNanos(GRACE_MS)) {
                    err.println("jccl run: a rank exited with status " + status + "; stopping the others");
                    processes.forEach(Process::destroyForcibly);
                }
                Thread.sleep(20);
            }
            if (elastic.enabled()) {
                boolean allDead = true;
                for (int r = 0; r < ranks; r++) {
                    allDead &= dead[r];
                }
                for (int r = 0; r < ranks && status == 0; r++) {
                    int s = processes.get(r).exitValue();
                    if (s != 0 && (!dead[r] || allDead)) {
                        status = s;
                    }
                }
            }
            for (Thread t : pumps) {
                t.join(2000);
            }
            return status;
        } finally {
            processes.forEach(Process::destroyForcibly);
            if (elasticDir != null) {
                try (var files = java.nio.file.Files.list(elasticDir)) {
                    for (Path f : (Iterable<Path>) files::iterator) {
                        java.nio.file.Files.deleteIfExists(f);
                    }
                    java.nio.file.Files.deleteIfExists(elasticDir);
                } catch (IOException e) {
                    err.println("jccl run: could not remove " + elasticDir + ": " + e.getMessage());
                }
            }
            try {
                Runtime.getRuntime().removeShutdownHook(stopAll);
            } catch (IllegalStateException ignored) {
                // The JVM is shutting down: the hook runs anyway.
            }
        }
    }

    /** @return {@code java} of this JVM with the options every rank needs, and {@code JCCL_JAVA_OPTS} */
    static List<String> javaCommand() {
        List<String> c = new ArrayList<>();
        c.add(ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        c.add("--enable-native-access=ALL-UNNAMED");
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()) {
            // the ranks reduce with the same (vectorised) host kernel as this JVM
            c.add("--add-modules");
            c.add("jdk.incubator.vector");
        }
        String opts = Env.get(CliConfig.JCCL_JAVA_OPTS);
        if (opts != null) {
            c.addAll(List.of(opts.trim().split("\\s+")));
        }
        return c;
    }

    private static Thread pump(InputStream in, PrintStream to, String prefix) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    to.println(prefix + line);
                }
            } catch (IOException ignored) {
                // The rank is gone; its exit status tells.
            }
            to.flush();
        }, "jccl-run-output");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** @return the first rank placed on {@code host} of {@code hosts}, ranks in blocks */
    static int firstRankOf(int host, int hosts, int ranks) {
        for (int r = 0; r < ranks; r++) {
            if ((long) r * hosts / ranks >= host) {
                return r;
            }
        }
        return ranks;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }
}
