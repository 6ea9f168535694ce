package io.jccl.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code jccl tck} against JcclSocket, which the CLI carries on its class path. */
class TckCommandTest {

    @Test
    void printsOneRowPerRuleAndWritesTheReports(@TempDir Path dir) throws Exception {
        CliRun r = CliRun.of("tck", "--net", "jcclsocket", "--rule", "life,conn.1", "--required-only",
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
        CliRun r = CliRun.of("tck", "--net", "NoSuchTransport");
        assertEquals(TckCommand.EXIT_NO_SUCH_TRANSPORT, r.exitCode(), r.output());
        assertTrue(r.output().contains("No transport named NoSuchTransport. Found: JcclSocket"), r.output());
    }

    @Test
    void aNativeLibraryThatDoesNotLoadIsNamedWithTheLinkersReason() {
        CliRun r = CliRun.of("tck", "--native", "/opt/lib/libnccl-net-vendor.so");
        assertEquals(TckCommand.EXIT_NO_SUCH_TRANSPORT, r.exitCode(), r.output());
        assertTrue(r.output().contains("Cannot check /opt/lib/libnccl-net-vendor.so: ")
                && r.output().contains("No such file or directory"), r.output());
    }

    @Test
    void listsTheRulesWithTheirHints() {
        CliRun r = CliRun.of("tck", "--list");
        assertEquals(0, r.exitCode(), r.output());
        assertTrue(r.output().contains("fault.2   required  a killed peer fails every pending request"), r.output());
        assertTrue(r.output().contains("if this fails, check: "), r.output());
        assertTrue(r.output().contains("coll.4 "), r.output());
    }

    @Test
    void withoutATransportItIsAUsageError() {
        CliRun r = CliRun.of("tck");
        assertEquals(2, r.exitCode(), r.output());
        assertTrue(r.output().contains("--net NAME"), r.output());
    }
}
