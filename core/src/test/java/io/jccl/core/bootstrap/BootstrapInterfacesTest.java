package io.jccl.core.bootstrap;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNotNull;

/** The bootstrap's address, chosen with NCCL_SOCKET_IFNAME's rules (tested with the SPI's InterfaceFilter). */
class BootstrapInterfacesTest {
    @Test
    void thisMachineHasAnAddressForTheBootstrap() {
        assertNotNull(BootstrapInterfaces.localAddress());
    }
}
