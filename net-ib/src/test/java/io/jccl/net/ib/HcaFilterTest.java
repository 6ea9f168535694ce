package io.jccl.net.ib;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** NCCL_IB_HCA's syntax, as NCCL's parseStringList and matchIfList read it. */
class HcaFilterTest {

    @Test
    void unsetSelectsEverything() {
        HcaFilter f = HcaFilter.parse(null);
        assertTrue(f.accepts("mlx5_0", 1));
        assertTrue(f.accepts("rxe0", 2));
        assertTrue(HcaFilter.parse("  ").accepts("mlx5_3", 1));
    }

    @Test
    void namesMatchByPrefixAndPortsNarrow() {
        HcaFilter f = HcaFilter.parse("mlx5_0:1,mlx5_1");
        assertTrue(f.accepts("mlx5_0", 1));
        assertFalse(f.accepts("mlx5_0", 2), "only port 1 of mlx5_0");
        assertTrue(f.accepts("mlx5_1", 1));
        assertTrue(f.accepts("mlx5_1", 2), "no port: every port");
        assertTrue(f.accepts("mlx5_10", 1), "prefix match, as NCCL's");
        assertFalse(f.accepts("mlx5_2", 1));
    }

    @Test
    void equalsSignAsksForExactNames() {
        HcaFilter f = HcaFilter.parse("=mlx5_1");
        assertTrue(f.accepts("mlx5_1", 1));
        assertFalse(f.accepts("mlx5_10", 1));
    }

    @Test
    void caretExcludes() {
        HcaFilter f = HcaFilter.parse("^mlx5_0:2,rxe");
        assertTrue(f.accepts("mlx5_0", 1));
        assertFalse(f.accepts("mlx5_0", 2));
        assertFalse(f.accepts("rxe0", 1));
        assertTrue(f.accepts("mlx5_1", 1));
        HcaFilter exact = HcaFilter.parse("^=mlx5_1");
        assertFalse(exact.accepts("mlx5_1", 1));
        assertTrue(exact.accepts("mlx5_10", 1));
    }

    @Test
    void railAndPlaneFieldsAreIgnored() {
        assertTrue(HcaFilter.parse("mlx5_0:1:0:1").accepts("mlx5_0", 1));
    }

    @Test
    void malformedPortsNameTheVariable() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HcaFilter.parse("mlx5_0:x"));
        assertTrue(e.getMessage().contains("NCCL_IB_HCA"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> HcaFilter.parse("mlx5_0:0"));
    }
}
