package io.jccl.net.ib;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IbConfigTest {

    @AfterEach
    void clear() {
        for (String v : List.of(IbConfig.NCCL_IB_TIMEOUT, IbConfig.NCCL_IB_QPS_PER_CONNECTION,
                IbConfig.NCCL_IB_SPLIT_DATA_ON_QPS, IbConfig.NCCL_IB_ADDR_FAMILY, IbConfig.JCCL_IB_PEER_TIMEOUT_MS)) {
            System.clearProperty(v);
        }
    }

    @Test
    void defaultsAreNcclDefaults() {
        IbConfig c = IbConfig.fromEnvironment();
        assertTrue(c.hca().isEmpty());
        assertEquals(-1, c.gidIndex());
        assertEquals(4, c.addressFamily());
        assertNull(c.addressRange());
        assertEquals(2, c.roceVersion());
        assertEquals(20, c.timeout());
        assertEquals(7, c.retryCount());
        assertEquals(1, c.qpsPerConnection());
        assertFalse(c.splitDataOnQps());
        assertEquals(0, c.serviceLevel());
        assertEquals(0, c.trafficClass());
        assertEquals(0, c.pkeyIndex());
        assertFalse(c.gdrFlushDisable());
        assertEquals(5000, c.peerTimeoutMs());
        assertFalse(c.flushHostMemory());
        // 4.096 us * 2^20: about 4.3 s per retry
        assertEquals(4_294_967_296L, c.ackTimeoutNanos());
    }

    @Test
    void valuesAreReadAndChecked() {
        System.setProperty(IbConfig.NCCL_IB_QPS_PER_CONNECTION, "4");
        System.setProperty(IbConfig.NCCL_IB_SPLIT_DATA_ON_QPS, "1");
        IbConfig c = IbConfig.fromEnvironment();
        assertEquals(4, c.qpsPerConnection());
        assertTrue(c.splitDataOnQps());

        System.setProperty(IbConfig.NCCL_IB_QPS_PER_CONNECTION, "129");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, IbConfig::fromEnvironment);
        assertTrue(e.getMessage().startsWith("NCCL_IB_QPS_PER_CONNECTION=129"), e.getMessage());
        System.clearProperty(IbConfig.NCCL_IB_QPS_PER_CONNECTION);

        System.setProperty(IbConfig.NCCL_IB_TIMEOUT, "32");
        assertThrows(IllegalArgumentException.class, IbConfig::fromEnvironment);
        System.setProperty(IbConfig.NCCL_IB_TIMEOUT, "12");
        assertEquals(12, IbConfig.fromEnvironment().timeout());

        System.setProperty(IbConfig.NCCL_IB_ADDR_FAMILY, "AF_UNIX");
        assertThrows(IllegalArgumentException.class, IbConfig::fromEnvironment);
    }
}
