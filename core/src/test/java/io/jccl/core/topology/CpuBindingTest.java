package io.jccl.core.topology;

import org.junit.jupiter.api.Test;

import java.util.BitSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Ranks per core, as the tuner weighs halving-doubling against rings: a launcher that binds each
 * rank to a core of its own is not oversubscription (each rank sees one processor, the ranks
 * together four); ranks that share an unbound pair of cores, or a binding, or a CPU quota are.
 */
class CpuBindingTest {
    private static final String[] ONE_HOST = {"a", "a", "a", "a"};

    @Test
    void unboundRanksShareTheMachinesCores() {
        BitSet both = CpuBinding.cpusOf("0-1");
        assertEquals(2.0, CpuBinding.ranksPerCore(ONE_HOST, new int[] {2, 2, 2, 2}, new BitSet[] {both, both, both, both}));
        BitSet sixteen = CpuBinding.cpusOf("0-15");
        assertEquals(1.0, CpuBinding.ranksPerCore(ONE_HOST, new int[] {16, 16, 16, 16},
                new BitSet[] {sixteen, sixteen, sixteen, sixteen}), "fewer ranks than cores count as one per core");
    }

    @Test
    void aCoreOfItsOwnPerRankIsNotOversubscription() {
        BitSet[] own = {CpuBinding.cpusOf("0"), CpuBinding.cpusOf("1"), CpuBinding.cpusOf("8"), CpuBinding.cpusOf("9")};
        assertEquals(1.0, CpuBinding.ranksPerCore(ONE_HOST, new int[] {1, 1, 1, 1}, own));
        BitSet zero = CpuBinding.cpusOf("0");
        assertEquals(4.0, CpuBinding.ranksPerCore(ONE_HOST, new int[] {1, 1, 1, 1}, new BitSet[] {zero, zero, zero, zero}),
                "four ranks bound to one core");
    }

    @Test
    void aQuotaOrAnUnknownBindingCountsTheProcessorsARankMayUse() {
        BitSet all = CpuBinding.cpusOf("0-63");
        assertEquals(2.0, CpuBinding.ranksPerCore(ONE_HOST, new int[] {2, 2, 2, 2}, new BitSet[] {all, all, all, all}),
                "a 2-CPU quota on a 64-CPU host");
        BitSet unknown = CpuBinding.cpusOf("");
        assertEquals(4.0, CpuBinding.ranksPerCore(ONE_HOST, new int[] {1, 1, 1, 1},
                new BitSet[] {unknown, unknown, unknown, unknown}));
    }

    @Test
    void theBusiestHostCounts() {
        BitSet two = CpuBinding.cpusOf("0-1");
        BitSet eight = CpuBinding.cpusOf("0-7");
        String[] hosts = {"a", "a", "a", "a", "b", "b"};
        int[] processors = {2, 2, 2, 2, 8, 8};
        BitSet[] allowed = {two, two, two, two, eight, eight};
        assertEquals(2.0, CpuBinding.ranksPerCore(hosts, processors, allowed));
        assertEquals(2.0, CpuBinding.ranksPerCoreOn("a", hosts, processors, allowed));
        assertEquals(0.25, CpuBinding.ranksPerCoreOn("b", hosts, processors, allowed), "2 ranks on 8 cores");
    }

    @Test
    void cpuListsParseAsTheKernelWritesThem() {
        assertEquals(8, CpuBinding.cpusOf("0-3,8-11").cardinality());
        assertEquals(0, CpuBinding.cpusOf("garbage").cardinality());
        assertFalse(CpuBinding.allowedList().isEmpty() && System.getProperty("os.name").startsWith("Linux"),
                "Linux says which CPUs a process may use in /proc/self/status");
    }
}
