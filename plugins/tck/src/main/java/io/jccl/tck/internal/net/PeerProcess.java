package io.jccl.tck.internal.net;

import io.jccl.tck.PeerTransport;
import io.jccl.tck.internal.Deadline;
import io.jccl.tck.peer.PeerMain;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * The kit's side of a forked peer JVM ({@link io.jccl.tck.peer.PeerMain}): starts it with this
 * JVM's class path, sends it commands, reads its answers, and kills it.
 */
public final class PeerProcess implements AutoCloseable {
    private static final String EOF = "\u0000EOF";

    private final Process process;
    private final PrintStream commands;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private final Path stderr;

    private PeerProcess(Process process, Path stderr) {
        this.process = process;
        this.stderr = stderr;
        this.commands = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    answers.add(line);
                }
            } catch (IOException e) {
                // The process died; EOF below tells the waiting side.
            }
            answers.add(EOF);
        }, "jccl-tck-peer-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a peer JVM and waits for it to initialise its transport.
     *
     * @param timeout how long start-up and {@code init} may take
     */
    public static PeerProcess start(PeerTransport transport, Duration timeout) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-XX:+UseSerialGC");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-Xshare:auto");
        cmd.add("-Xmx256m");
        // NCCL_* and JCCL_* settings given to this JVM as system properties hold for the peer too.
        for (Map.Entry<Object, Object> e : System.getProperties().entrySet()) {
            String k = String.valueOf(e.getKey());
            if (k.startsWith("NCCL_") || k.startsWith("JCCL_")) {
                cmd.add("-D" + k + "=" + e.getValue());
            }
        }
        // The peer sees what this JVM sees: its class path, and its module path when the kit runs as a module.
        String classPath = System.getProperty("java.class.path", "");
        if (!classPath.isEmpty()) {
            cmd.add("-cp");
            cmd.add(classPath);
        }
        String modulePath = System.getProperty("jdk.module.path");
        if (modulePath != null && !modulePath.isEmpty()) {
            cmd.add("-p");
            cmd.add(modulePath);
            cmd.add("--add-modules");
            cmd.add("ALL-MODULE-PATH");
        }
        Module kit = PeerMain.class.getModule();
        if (kit.isNamed()) {
            cmd.add("-m");
            cmd.add(kit.getName() + "/" + PeerMain.class.getName());
        } else {
            cmd.add(PeerMain.class.getName());
        }
        cmd.add(transport.spec());
        Path err = Files.createTempFile("jccl-tck-peer-", ".log");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        PeerProcess peer = new PeerProcess(p, err);
        peer.await("READY", timeout);
        return peer;
    }

    /** Sends one command line. */
    public void send(String command) {
        commands.println(command);
    }

    /**
     * Sends a command and waits for the answer that starts with {@code prefix}.
     *
     * @return the rest of the answer line after the prefix and a space
     */
    public String request(String command, String prefix, Duration timeout) {
        send(command);
        return await(prefix, timeout);
    }

    /**
     * Waits for an answer that starts with {@code prefix}; fails the rule on {@code ERR}, on the
     * peer's death or after {@code timeout}.
     *
     * @return the rest of the line after the prefix and a space
     */
    public String await(String prefix, Duration timeout) {
        Deadline d = Deadline.after(timeout);
        while (true) {
            String line;
            try {
                line = answers.poll(d.remaining().toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted waiting for the peer", e);
            }
            if (line == null) {
                fail("the peer JVM did not answer " + prefix + " within " + Deadline.format(timeout) + stderrTail());
            }
            if (line.equals(EOF)) {
                fail("the peer JVM exited while the kit waited for " + prefix + stderrTail());
            }
            if (line.startsWith("ERR")) {
                fail("the peer JVM failed: " + line.substring(3).trim() + stderrTail());
            }
            if (line.startsWith(prefix)) {
                return line.substring(prefix.length()).trim();
            }
        }
    }

    /** Kills the peer with SIGKILL, as a crash or an OOM killer would, and waits until it is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            fail("the peer JVM (pid " + process.pid() + ") did not die within 30 s of SIGKILL");
        }
    }

    /** @return the last lines the peer wrote to stderr, for failure messages */
    public String stderrTail() {
        try {
            List<String> lines = Files.readAllLines(stderr, StandardCharsets.UTF_8);
            if (lines.isEmpty()) {
                return "";
            }
            return "\nThe peer's stderr (last lines):\n  "
                    + String.join("\n  ", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void close() throws InterruptedException, IOException {
        if (process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        Files.deleteIfExists(stderr);
    }
}
