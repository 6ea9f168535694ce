package io.jccl.core.transport;

import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.discovery.NetPluginDiscovery;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Tests of network connections over the real JcclSocket, loaded once per test class. */
abstract class OverJcclSocket {
    /** Slot size of the connections these tests make. */
    static final int SLOT = 4096;
    static NetPlugin socket;

    @BeforeAll
    static void loadSocket() throws Exception {
        socket = NetPluginDiscovery.load().findNet("JcclSocket").orElseThrow();
        socket.init(NetLogger.noop());
    }

    @AfterAll
    static void closeSocket() throws Exception {
        socket.close();
    }
}
