package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Verbs;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetResult;
import io.jccl.spi.discovery.NetPluginDiscovery;
import org.junit.jupiter.api.Test;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** Netty-style availability: a machine without RDMA gets a clear reason, never a crash. */
class IbAvailabilityTest {

    @Test
    void availabilityAndItsCauseAgree() {
        assertEquals(IbNetPlugin.isAvailable(), IbNetPlugin.unavailabilityCause() == null);
        assertEquals(Verbs.isAvailable(), Verbs.unavailabilityCause() == null);
        if (!Verbs.isAvailable()) {
            assertThrows(UnsatisfiedLinkError.class, Verbs::ensureAvailability);
            assertNull(Verbs.library());
        } else {
            Verbs.ensureAvailability();
            assertTrue(Verbs.library().startsWith("libibverbs.so"), Verbs.library());
        }
    }

    @Test
    void withoutADeviceInitFailsWithTheReasonAndDiscoveryMovesOn() {
        assumeFalse(IbNetPlugin.isAvailable(), "this machine has a usable RDMA device");
        IbNetPlugin p = new IbNetPlugin();
        NetException e = assertThrows(NetException.class, () -> p.init(NetLogger.noop()));
        assertEquals(NetResult.SYSTEM_ERROR, e.result());
        assertTrue(e.getMessage().startsWith("JcclIB: "), e.getMessage());
        assertEquals(NetResult.INTERNAL_ERROR, assertThrows(NetException.class, p::devices).result(),
                "no devices before a successful init");
        assertNotNull(IbNetPlugin.unavailabilityCause().getMessage());
    }

    @Test
    void theProviderIsRegisteredAndConstructionDoesNoWork() {
        NetPluginDiscovery found = NetPluginDiscovery.load();
        Optional<NetPlugin> ib = found.netPlugins().stream().filter(p -> p.name().equals(IbNetPlugin.NAME)).findFirst();
        assertTrue(ib.isPresent(), "META-INF/services lists JcclIB: " + found.netPlugins());
        assertTrue(ib.get() instanceof IbNetPlugin);
    }

    @Test
    void aBadVariableIsAnInvalidUsageNamingIt() {
        System.setProperty(IbConfig.NCCL_IB_QPS_PER_CONNECTION, "0");
        try {
            NetException e = assertThrows(NetException.class, () -> new IbNetPlugin().init(NetLogger.noop()));
            assertEquals(NetResult.INVALID_USAGE, e.result());
            assertTrue(e.getMessage().contains(IbConfig.NCCL_IB_QPS_PER_CONNECTION), e.getMessage());
        } finally {
            System.clearProperty(IbConfig.NCCL_IB_QPS_PER_CONNECTION);
        }
    }
}
