package io.jccl.net.socket;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * JcclSocket in a jlink'ed runtime of {@code java.base} alone (no {@code jdk.net}): connections are
 * made and carry data, with plain SO_KEEPALIVE, and one INFO line says so.
 */
class MinimalRuntimeTest {

    @Test
    void jcclSocketRunsWithoutJdkNet() throws Exception {
        Path runtime = javaBaseRuntime();
        Process p = new ProcessBuilder(runtime.resolve("bin/java").toString(), "-cp", System.getProperty("java.class.path"),
                MinimalRuntimeMain.class.getName()).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the run did not finish in 60 s");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.endsWith("OK\n"), out);
        assertEquals(1, out.lines().filter(l -> l.contains("module jdk.net is not in this Java runtime")).count(),
                "one INFO line about the fallback, however many sockets: " + out);
        assertTrue(out.lines().noneMatch(l -> l.startsWith("WARN")), out);
    }

    /** @return a runtime with java.base only, linked once into target/ from the JDK running the tests */
    static synchronized Path javaBaseRuntime() throws IOException, InterruptedException {
        Path runtime = Path.of("target", "jre-java.base").toAbsolutePath();
        if (Files.isRegularFile(runtime.resolve("release"))) {
            return runtime;
        }
        Path jlink = Path.of(System.getProperty("java.home"), "bin", "jlink");
        Assumptions.assumeTrue(Files.isExecutable(jlink), "no jlink in " + System.getProperty("java.home"));
        Process p = new ProcessBuilder(List.of(jlink.toString(), "--add-modules", "java.base", "--output",
                runtime.toString())).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), "jlink failed: " + out);
        return runtime;
    }
}
