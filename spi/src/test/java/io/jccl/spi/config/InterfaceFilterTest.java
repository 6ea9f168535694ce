package io.jccl.spi.config;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** NCCL_SOCKET_IFNAME's syntax and NCCL's default order, shared by the bootstrap and the TCP transports. */
class InterfaceFilterTest {
    @Test
    void prefixesExclusionsAndExactNames() {
        assertTrue(InterfaceFilter.parse("eth,ib").accepts("eth10"));
        assertFalse(InterfaceFilter.parse("eth,ib").accepts("enp1s0"));
        assertFalse(InterfaceFilter.parse("^docker,lo").accepts("docker0"));
        assertTrue(InterfaceFilter.parse("^docker,lo").accepts("eth0"));
        assertTrue(InterfaceFilter.parse("=eth0").accepts("eth0"));
        assertFalse(InterfaceFilter.parse("=eth0").accepts("eth01"));
        assertFalse(InterfaceFilter.parse("^=eth0").accepts("eth0"));
        assertTrue(InterfaceFilter.parse("^=eth0").accepts("eth01"));
        assertTrue(InterfaceFilter.parse("mlx5_0:1").accepts("mlx5_0"));
    }

    @Test
    void unsetTakesTheFirstTierWithAnInterface() {
        Function<String, String> name = n -> n;
        assertEquals(List.of("ib0"), InterfaceFilter.choose(List.of("lo", "eth0", "ib0"), name, null));
        assertEquals(List.of("eth0", "enp1"), InterfaceFilter.choose(List.of("lo", "eth0", "docker0", "enp1"), name, null));
        assertEquals(List.of("lo"), InterfaceFilter.choose(List.of("lo"), name, ""));
        assertEquals(List.of("docker0"), InterfaceFilter.choose(List.of("lo", "eth0", "docker0"), name, "docker"));
    }

    @Test
    void familyIsNcclSocketFamily() {
        assertEquals(0, InterfaceFilter.family(null));
        assertEquals(4, InterfaceFilter.family("AF_INET"));
        assertEquals(6, InterfaceFilter.family("af_inet6"));
        assertThrows(IllegalArgumentException.class, () -> InterfaceFilter.family("AF_UNIX"));
    }
}
