package io.jccl.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code jccl perf} and {@code jccl run} end to end: real ranks, the socket transport, the table. */
class PerfAndRunCommandTest {
    private record Run(int exitCode, String out, String err) {
    }

    private static synchronized Run jccl(String... args) {
        PrintStream oldOut = System.out;
        PrintStream oldErr = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            int rc = Jccl.commandLine().execute(args);
            return new Run(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } finally {
            System.setOut(oldOut);
            System.setErr(oldErr);
        }
    }

    static final Pattern ROW = Pattern.compile(
            "^ +(\\d+) +(\\d+) +(\\S+) +(\\S+) +(-?\\d+)( +\\S+){3} +(\\d+)( +\\S+){3} +(\\d+) +(LL|Ring|Tree|P2P|local)$");

    @Test
    void perfPrintsNcclTestsTableForThreadRanksAndChecksEveryRow() {
        Run r = jccl("perf", "all_reduce", "-b", "8", "-e", "1M", "-f", "32", "-t", "3", "-n", "3", "-d", "int32",
                "-o", "max");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        List<String> rows = r.out().lines().filter(l -> ROW.matcher(l).matches()).toList();
        assertEquals(List.of("8", "256", "8192", "262144"), rows.stream().map(l -> l.trim().split(" +")[0]).toList(),
                r.out());
        Matcher board = Pattern.compile("all-reduce up to (\\d+) B on the board").matcher(r.out());
        long boardLimit = board.find() ? Long.parseLong(board.group(1)) : 0;
        for (String row : rows) {
            String[] f = row.trim().split(" +");
            assertEquals("int32", f[2]);
            assertEquals("max", f[3]);
            assertEquals("-1", f[4]);
            assertEquals("0", f[8], "#wrong out-of-place: " + row);
            assertEquals("0", f[12], "#wrong in-place: " + row);
            // what ran the row: LL up to its threshold (64 KiB a rank), and up to the board's all-reduce
            // limit where the header names one (ranks outnumber cores), the ring above (shared memory)
            assertEquals(Long.parseLong(f[0]) <= Math.max(65536, boardLimit) ? "LL" : "Ring", f[13], row);
        }
        assertTrue(r.out().contains("# Out of bounds values : 0 OK"), r.out());
        assertTrue(r.out().contains("# Avg bus bandwidth    : "), r.out());
        assertTrue(r.out().contains("# Collective test concluded: all_reduce_perf"), r.out());
        assertTrue(r.out().contains("#  Rank  2 Group  0 Pid"), r.out());
    }

    @Test
    void perfStartsProcessRanksWithNp() {
        Run r = jccl("perf", "sendrecv", "-b", "1K", "-e", "64K", "-f", "64", "-np", "2", "-n", "2");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertEquals(2, r.out().lines().filter(l -> ROW.matcher(l).matches()).count(), r.out());
        assertTrue(r.out().contains("#  Rank  1 Group  0 Pid"), r.out());
    }

    @Test
    void badRankCountsAndSizesThatCannotFitAreRefusedInOneLineBeforeAnyRankStarts() {
        Run none = jccl("perf", "all_reduce", "-b", "8", "-e", "8", "-np", "0");
        assertEquals(2, none.exitCode(), none.out() + none.err());
        assertEquals("jccl perf: -np 0 -t 1: the number of ranks (processes or threads) must be at least 1",
                none.err().strip());
        Run huge = jccl("perf", "all_reduce", "-b", "64T", "-e", "64T", "-np", "2");
        assertEquals(2, huge.exitCode(), huge.out() + huge.err());
        assertTrue(huge.err().startsWith("jccl perf: -e 70368744177664 with 2 ranks needs ")
                && huge.err().contains("GiB available") && huge.err().strip().lines().count() == 1, huge.err());
        assertTrue(huge.out().isEmpty(), "no rank started: " + huge.out());
    }

    @Test
    void anErrorThatEscapesACommandIsOneLineWithStatus2ForBadInput() {
        java.io.StringWriter err = new java.io.StringWriter();
        picocli.CommandLine cl = Jccl.commandLine();
        cl.setErr(new java.io.PrintWriter(err, true));
        picocli.CommandLine.ParseResult parsed = cl.parseArgs("perf", "all_reduce");
        int rc = Jccl.oneLine(new IllegalArgumentException("NCCL_BUFFSIZE=abc is not a size such as 4096, 512K, 4M or 1G"),
                cl, parsed);
        assertEquals(2, rc);
        // (a stack trace follows only where NCCL_DEBUG asks for INFO or TRACE)
        assertEquals("jccl perf: NCCL_BUFFSIZE=abc is not a size such as 4096, 512K, 4M or 1G",
                err.toString().lines().findFirst().orElse(""));
        java.io.StringWriter err2 = new java.io.StringWriter();
        cl.setErr(new java.io.PrintWriter(err2, true));
        assertEquals(1, Jccl.oneLine(new IllegalStateException("broken\nsecond line"), cl, parsed));
        assertEquals("jccl perf: broken", err2.toString().lines().findFirst().orElse(""));
    }

    @Test
    void perfOnGpusSaysInOneLineWhyItCannotRunHereOrWhatItDoesNotTake() {
        Run r = jccl("perf", "all_reduce", "-b", "1K", "-e", "1K", "-g", "1");
        if (!io.jccl.cuda.Cuda.isAvailable()) {
            assertEquals(2, r.exitCode(), r.out() + r.err());
            assertTrue(r.err().contains("-g 1 needs a GPU: ") && r.err().lines().count() == 1, r.err());
        } else {
            assertEquals(0, r.exitCode(), r.out() + r.err());
        }
        Run two = jccl("perf", "all_reduce", "-g", "2");
        assertEquals(2, two.exitCode(), two.out() + two.err());
        assertTrue(two.err().contains("a rank drives one GPU (-g 1) or none (-g 0)"), two.err());
    }

    @Test
    void runStartsRanksThatJoinFromTheLauncherVariablesAndPrefixesTheirOutput() {
        Run r = jccl("run", "-np", "3", "io.jccl.cli.examples.HelloAllReduce");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        for (int rank = 0; rank < 3; rank++) {
            assertTrue(r.out().contains("[rank " + rank + "] rank " + rank + " of 3 over JcclSocket: the sum of all ranks is 3"),
                    r.out());
        }
    }

    /**
     * The elastic example under jccl run --elastic --respawn 1: rank 1 crashes at step 5, the others
     * shrink, a new process joins by grow, and all three finish; without --elastic the job fails.
     */
    @Test
    void anElasticJobOutlivesACrashedRankAndARespawnedOneJoins() {
        Run r = jccl("run", "-np", "3", "--elastic", "--respawn", "1", "io.jccl.cli.examples.ElasticTraining", "20",
                "1", "5", "grow");
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("rank 1: crashing at step 5"), r.out());
        assertTrue(r.err().contains("jccl run: rank 1 exited with status 3; --elastic: the others go on, and a new "
                + "process joins in its place (1 of 1)"), r.err());
        assertTrue(r.out().contains("[rank 1'] joined as rank 2 of 3 at step 5"), r.out());
        assertEquals(3, r.out().lines().filter(l -> l.matches(".*rank \\d of 3: 20 steps done.*")).count(), r.out());

        Run plain = jccl("run", "-np", "3", "io.jccl.cli.examples.ElasticTraining", "20", "1", "5");
        assertEquals(3, plain.exitCode(), plain.out() + plain.err());

        Run bad = jccl("run", "-np", "2", "--respawn", "1", "io.jccl.cli.examples.ElasticTraining", "5");
        assertEquals(2, bad.exitCode());
        assertTrue(bad.err().contains("--respawn 1: needs --elastic"), bad.err());
    }

    @Test
    void runReportsAFailingRanksStatus() {
        Run r = jccl("run", "-np", "2", "io.jccl.cli.NoSuchClass");
        assertTrue(r.exitCode() != 0, r.out() + r.err());
        assertTrue(r.err().contains("[rank 1]"), r.err());
    }

    @Test
    void reportOptionsAreCheckedBeforeAnyRankStarts() {
        Run notSvg = jccl("perf", "all_reduce", "--plot", "/tmp/chart.png");
        assertEquals(2, notSvg.exitCode());
        assertEquals("jccl perf: --plot /tmp/chart.png: the chart is SVG; name a FILE.svg", notSvg.err().strip());
        Run lonely = jccl("perf", "all_reduce", "--baseline", "/tmp/x.json");
        assertEquals(2, lonely.exitCode());
        assertTrue(lonely.err().contains("add --plot FILE.svg"), lonely.err());
        Run missing = jccl("perf", "all_reduce", "--plot", "/tmp/c.svg", "--baseline", "/nonexistent/x.json");
        assertEquals(2, missing.exitCode());
        assertTrue(missing.err().startsWith("jccl perf: --baseline /nonexistent/x.json: cannot read it"), missing.err());
        Run noDir = jccl("perf", "all_reduce", "--json", "/nonexistent/r.json");
        assertEquals(2, noDir.exitCode());
        assertTrue(noDir.err().contains("no directory /nonexistent"), noDir.err());
    }

    @Test
    void badArgumentsAreRefusedWithAReason() {
        Run r = jccl("perf", "gather");
        assertEquals(2, r.exitCode());
        assertTrue(r.err().contains("unknown collective"), r.err());
    }
}
