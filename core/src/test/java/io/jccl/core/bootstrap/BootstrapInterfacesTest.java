package io.jccl.core.bootstrap;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** NCCL_SOCKET_IFNAME's syntax, as the bootstrap reads it. */
class BootstrapInterfacesTest {
    @Test
    void prefixesExclusionsAndExactNames() {
        assertTrue(BootstrapInterfaces.accepts("eth", "eth0"));
        assertFalse(BootstrapInterfaces.accepts("eth", "ib0"));
        assertTrue(BootstrapInterfaces.accepts("ib,eth", "eth1"));
        assertFalse(BootstrapInterfaces.accepts("^docker,lo", "lo"));
        assertTrue(BootstrapInterfaces.accepts("^docker,lo", "eth0"));
        assertFalse(BootstrapInterfaces.accepts("=eth0", "eth01"));
        assertTrue(BootstrapInterfaces.accepts("=eth0", "eth0"));
        assertFalse(BootstrapInterfaces.accepts("^=eth0", "eth0"));
        assertTrue(BootstrapInterfaces.accepts("eth0:1234", "eth0"));
    }

    @Test
    void thisMachineHasAnAddressForTheBootstrap() {
        assertNotNull(BootstrapInterfaces.localAddress());
    }
}
