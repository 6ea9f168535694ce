package io.jccl.net.socket;

import io.jccl.spi.ListenComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A {@link PeerProcess} in its own JVM, connected both ways to {@code lo}'s plugin: this side's
 * {@link #send} reaches the peer's receive, the peer's send reaches {@link #recv}.
 */
final class RemotePeer implements AutoCloseable {
    final Process process;
    final SendComm send;
    final RecvComm recv;
    private final BufferedReader out;

    /**
     * @param variables JcclSocket variables of the peer (system properties there)
     * @param args      the peer's mode, see {@link PeerProcess}
     */
    RemotePeer(Loopback lo, Map<String, String> variables, String... args) throws IOException, NetException {
        NetHandle h = NetHandle.allocate();
        ListenComm listen = lo.plugin.listen(0, h);
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED"));
        variables.forEach((k, v) -> command.add("-D" + k + "=" + v));
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), PeerProcess.class.getName()));
        command.addAll(List.of(args));
        process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            out = new BufferedReader(new InputStreamReader(process.getInputStream()));
            NetHandle theirs = NetHandle.fromBytes(HexFormat.of().parseHex(out.readLine().trim()));
            PrintStream toPeer = new PrintStream(process.getOutputStream(), true);
            toPeer.println(HexFormat.of().formatHex(h.toByteArray()));
            SendComm s = null;
            RecvComm r = null;
            long deadline = System.currentTimeMillis() + Loopback.DEADLINE_MS;
            while (s == null || r == null) {
                if (s == null) {
                    s = lo.plugin.connect(0, theirs);
                }
                if (r == null) {
                    r = lo.plugin.accept(listen);
                }
                assertTrue(System.currentTimeMillis() < deadline, "peer did not connect");
            }
            send = s;
            recv = r;
            expect("READY");
        } catch (IOException | NetException | RuntimeException | Error e) {
            process.destroyForcibly();
            throw e;
        }
    }

    /** Reads the peer's next line and checks it. */
    void expect(String line) throws IOException {
        assertEquals(line, out.readLine(), "the peer's output");
    }

    /** Sends a signal (STOP, CONT) to the peer process. */
    void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + name);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
}
