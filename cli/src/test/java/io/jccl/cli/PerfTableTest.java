package io.jccl.cli;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** nccl-tests' number formats and names, as C's printf would write them. */
class PerfTableTest {
    @Test
    void floatsAreAsWideAsNcclTestsPrintsThem() {
        assertEquals("   0.00", PerfTable.floatStr(0.0, 7));
        assertEquals("  17.83", PerfTable.floatStr(17.8312, 7));
        assertEquals("1234.57", PerfTable.floatStr(1234.567, 7));
        assertEquals("12345.7", PerfTable.floatStr(12345.67, 7));
        assertEquals("1234568", PerfTable.floatStr(1234567.8, 7));
        assertEquals("1.2e+07", PerfTable.floatStr(12345678.0, 7));
        assertEquals("  1.23", PerfTable.floatStr(1.234, 6));
        assertEquals("123.46", PerfTable.floatStr(123.456, 6));
    }

    @Test
    void percentGLikeC() {
        assertEquals("0", PerfTable.cG(0));
        assertEquals("12", PerfTable.cG(12));
        assertEquals("1.23457", PerfTable.cG(1.234567));
        assertEquals("0.0829594", PerfTable.cG(0.08295941));
        assertEquals("123457", PerfTable.cG(123456.7));
        assertEquals("1.23457e+06", PerfTable.cG(1234567));
        assertEquals("1e-05", PerfTable.cG(0.00001));
    }

    @Test
    void rowsAndHeaderHaveNcclTestsColumns() {
        String row = PerfTable.preamble(8, 2, "float", "sum", -1) + PerfTable.body(17.83, 0.0, 0.0, 0)
                + PerfTable.body(17.46, 0.0, 0.0, -1);
        assertEquals("           8             2     float     sum      -1    17.83    0.00    0.00       0"
                + "    17.46    0.00    0.00    N/A", row);
        String[] header = PerfTable.header().split("\n");
        assertEquals("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   "
                + "algbw   busbw  #wrong  algo", header[2]);
        // nccl-tests' columns first, JCCL's choice of algorithm last, so parsers of either read the row.
        assertEquals("  Tree", PerfTable.algorithm("Tree"));
        assertEquals("# Out of bounds values : 3 FAILED", PerfTable.footer(3, 1.5, "x").split("\n")[0]);
        assertEquals("# Avg bus bandwidth    : 1.5 ", PerfTable.footer(0, 1.5, "x").split("\n")[1]);
    }

    @Test
    void collectivesByTheirNcclTestsNamesAndCounts() {
        assertEquals(PerfCollective.ALL_REDUCE, PerfCollective.parse("all_reduce_perf"));
        assertEquals(PerfCollective.ALL_TO_ALL, PerfCollective.parse("AllToAll"));
        assertEquals(PerfCollective.REDUCE_SCATTER, PerfCollective.parse("reducescatter"));
        assertThrows(IllegalArgumentException.class, () -> PerfCollective.parse("gather"));
        PerfCollective.Counts ag = PerfCollective.ALL_GATHER.counts(1 << 20, 4, 3);
        assertEquals(87380, ag.param(), "per-rank count rounded down to 16 bytes");
        assertEquals(3 * 87380, ag.recv());
        assertEquals(1.5, PerfCollective.ALL_REDUCE.busFactor(4));
        assertEquals(0.75, PerfCollective.ALL_TO_ALL.busFactor(4));
        assertEquals(List.of("perf", "all_reduce", "-b", "8"),
                PerfCommand.withoutProcesses(List.of("perf", "all_reduce", "-np", "4", "-b", "8", "--np=2")));
    }
}
