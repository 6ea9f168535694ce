package io.jccl.core;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@link PeerRank} in a child JVM, with its output lines in a queue. */
final class ChildRank implements AutoCloseable {
    final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();

    ChildRank(int nranks, int rank, UniqueId id, long peerTimeoutMs) throws IOException {
        this(nranks, rank, id, peerTimeoutMs, 1 << 20);
    }

    /** @param count elements of each all-reduce the child loops on */
    ChildRank(int nranks, int rank, UniqueId id, long peerTimeoutMs, long count) throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        process = new ProcessBuilder(List.of(java.toString(), "--enable-native-access=ALL-UNNAMED", "-Xmx256m",
                "-cp", System.getProperty("java.class.path"), PeerRank.class.getName(), String.valueOf(nranks),
                String.valueOf(rank), id.toString(), String.valueOf(peerTimeoutMs), String.valueOf(count)))
                .redirectErrorStream(true).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream()))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException ignored) {
                // The child is gone.
            }
        }, "child-rank-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Waits for a line starting with {@code prefix}; fails the test after {@code seconds}. */
    String await(String prefix, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        StringBuilder seen = new StringBuilder();
        while (System.nanoTime() < deadline) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                if (line.startsWith(prefix)) {
                    return line;
                }
                seen.append(line).append('\n');
            }
        }
        throw new AssertionError("the child rank did not print '" + prefix + "' within " + seconds + " s; it printed:\n"
                + seen);
    }

    /** Freezes the child as a hung process or an unreachable host would look (SIGSTOP). */
    void freeze() throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-STOP", String.valueOf(process.pid())).start().waitFor();
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }
}
