package io.jccl.shim;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Under NCCL, JcclSocket keeps NCCL's threads per connection: the shim turns off JcclSocket's
 * process-wide bound on I/O threads, and caps its automatic layout at one I/O thread per connection,
 * unless the user set them. If this fails, check the names against JcclSocket's SocketConfig
 * (JCCL_SOCKET_IO_THREADS, JCCL_SOCKET_AUTO_THREADS_MAX).
 */
class ShimSocketDefaultsTest {

    @Test
    void theIoThreadBoundIsOffUnderNcclUnlessSet() {
        String name = ShimBridge.SOCKET_IO_THREADS;
        assertEquals("JCCL_SOCKET_IO_THREADS", name);
        setUnlessUserSet(name, "0");
    }

    /** NCCL's many connections (a channel and a direction each) get one I/O thread each unless the user says. */
    @Test
    void theAutomaticLayoutHasOneThreadPerConnectionUnderNcclUnlessSet() {
        String name = ShimBridge.SOCKET_AUTO_THREADS_MAX;
        assertEquals("JCCL_SOCKET_AUTO_THREADS_MAX", name);
        setUnlessUserSet(name, "1");
    }

    /** Every name the shim sets: each test leaves them as it found them. */
    private static final String[] SET_BY_THE_SHIM = {ShimBridge.SOCKET_IO_THREADS, ShimBridge.SOCKET_AUTO_THREADS_MAX,
            ShimBridge.SOCKET_HELP_US};

    private static void setUnlessUserSet(String name, String underNccl) {
        String[] before = new String[SET_BY_THE_SHIM.length];
        for (int i = 0; i < before.length; i++) {
            before[i] = System.getProperty(SET_BY_THE_SHIM[i]);
        }
        try {
            System.clearProperty(name);
            if (System.getenv(name) == null) {
                ShimBridge.keepThreadsPerConnection();
                assertEquals(underNccl, System.getProperty(name), "unset: the shim's value under NCCL");
            }
            System.setProperty(name, "6");
            ShimBridge.keepThreadsPerConnection();
            assertEquals("6", System.getProperty(name), "a value the user set stays");
        } finally {
            for (int i = 0; i < before.length; i++) {
                if (before[i] == null) {
                    System.clearProperty(SET_BY_THE_SHIM[i]);
                } else {
                    System.setProperty(SET_BY_THE_SHIM[i], before[i]);
                }
            }
        }
    }
}
