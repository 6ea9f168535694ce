package io.jccl.shim;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Under NCCL, JcclSocket keeps NCCL's threads per connection: the shim turns off JcclSocket's
 * process-wide bound on I/O threads unless the user set it. If this fails, check the name against
 * JcclSocket's SocketConfig.JCCL_SOCKET_IO_THREADS.
 */
class ShimSocketDefaultsTest {

    @Test
    void theIoThreadBoundIsOffUnderNcclUnlessSet() {
        String name = ShimBridge.SOCKET_IO_THREADS;
        assertEquals("JCCL_SOCKET_IO_THREADS", name);
        String before = System.getProperty(name);
        try {
            System.clearProperty(name);
            if (System.getenv(name) == null) {
                ShimBridge.keepThreadsPerConnection();
                assertEquals("0", System.getProperty(name), "unset: no bound, as NCCL's Socket has none");
            }
            System.setProperty(name, "6");
            ShimBridge.keepThreadsPerConnection();
            assertEquals("6", System.getProperty(name), "a value the user set stays");
        } finally {
            if (before == null) {
                System.clearProperty(name);
            } else {
                System.setProperty(name, before);
            }
        }
    }
}
