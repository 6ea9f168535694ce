package io.jccl.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code jccl tck} against JcclSocket, which the CLI carries on its class path. */
class TckCommandTest {

    private record Run(int exitCode, String output) {
    }

    private static Run run(String... args) {
        StringWriter text = new StringWriter();
        CommandLine cmd = Jccl.commandLine();
        cmd.setOut(new PrintWriter(text));
        cmd.setErr(new PrintWriter(text));
        int rc = cmd.execute(args);
        return new Run(rc, text.toString());
    }

    @Test
    void printsOneRowPerRuleAndWritesTheReports(@TempDir Path dir) throws Exception {
        Run r = run("tck", "--net", "jcclsocket", "--rule", "life,conn.1", "--required-only",
                "--report-dir", dir.toString(), "--timeout-scale", "2");
        assertEquals(0, r.exitCode(), r.output());
        String out = r.output();
        assertTrue(out.contains("JCCL conformance kit: JcclSocket"), out);
        assertTrue(out.contains("timeout scale 2.0"), out);
        assertTrue(out.matches("(?s).*\nlife\\.1 +required +PASS +[0-9.]+ s  init may be called twice\n.*"), out);
        assertTrue(out.contains("conn.1 "), out);
        assertTrue(!out.contains("life.6 "), "optional rules were asked out: " + out);
        assertTrue(out.contains("required: 7 passed, 0 failed, 0 skipped"), out);
        assertTrue(out.contains("CONFORMANT"), out);
        assertTrue(Files.readString(dir.resolve("report.md")).contains("| conn.1 | required | PASS |"));
        try (var files = Files.list(dir)) {
            assertTrue(files.anyMatch(p -> p.getFileName().toString().startsWith("TEST-")
                    && p.toString().endsWith(".xml")), "JUnit XML in " + dir);
        }
    }

    @Test
    void anUnknownTransportHasItsOwnExitCode() {
        Run r = run("tck", "--net", "NoSuchTransport");
        assertEquals(TckCommand.EXIT_NO_SUCH_TRANSPORT, r.exitCode(), r.output());
        assertTrue(r.output().contains("No transport named NoSuchTransport. Found: JcclSocket"), r.output());
    }

    @Test
    void nativePluginsSayTheHostIsNotThereYet() {
        Run r = run("tck", "--native", "/opt/lib/libnccl-net-vendor.so");
        assertEquals(TckCommand.EXIT_NO_NATIVE_HOST, r.exitCode(), r.output());
        assertTrue(r.output().contains("native-plugin host, which is not in this build yet (issue 5)"), r.output());
    }

    @Test
    void listsTheRulesWithTheirHints() {
        Run r = run("tck", "--list");
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("fault.2   required  a killed peer fails every pending request"), r.output());
        assertTrue(r.output().contains("if this fails, check: "), r.output());
        assertTrue(r.output().contains("coll.4 "), r.output());
    }

    @Test
    void withoutATransportItIsAUsageError() {
        Run r = run("tck");
        assertEquals(2, r.exitCode(), r.output());
        assertTrue(r.output().contains("--net NAME"), r.output());
    }
}
