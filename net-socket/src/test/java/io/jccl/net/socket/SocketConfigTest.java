package io.jccl.net.socket;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The automatic stream layout, with and without a launcher's CPU binding. */
class SocketConfigTest {

    @Test
    void cpuListsAreCountedAsTheKernelWritesThem() {
        assertEquals(1, SocketConfig.countCpuList("0"));
        assertEquals(2, SocketConfig.countCpuList("0-1"));
        assertEquals(8, SocketConfig.countCpuList("0-3,8-11"));
        assertEquals(5, SocketConfig.countCpuList("0,2,4-6"));
        assertTrue(SocketConfig.onlineCpus() >= Runtime.getRuntime().availableProcessors(),
                "a process cannot use more CPUs than the machine has online");
    }

    @Test
    void anUnboundProcessGetsTheLayoutOfItsCoreCount() {
        assertLayout(0, 1, SocketConfig.autoLayout(2, 2));
        assertLayout(0, 1, SocketConfig.autoLayout(4, 4));
        assertLayout(2, 1, SocketConfig.autoLayout(8, 8));
        assertLayout(4, 1, SocketConfig.autoLayout(16, 16));
        assertLayout(4, 1, SocketConfig.autoLayout(128, 128));
    }

    @Test
    void aBindingDoesNotCollapseTheLayoutToNoStreams() {
        // mpirun's default: one core per rank on a 16-core host; taskset -c 0 on a 2-core machine.
        SocketConfig.Layout bound = SocketConfig.autoLayout(16, 1);
        assertLayout(4, 1, bound);
        assertTrue(bound.reason().contains("bound to 1 of 16"), bound.reason());
        assertLayout(2, 2, SocketConfig.autoLayout(2, 1));
        assertLayout(2, 2, SocketConfig.autoLayout(8, 4));
    }

    @Test
    void theThreadCapBoundsOnlyTheAutomaticLayoutAndRefusesZero() {
        SocketConfig.Layout capped = SocketConfig.capped(SocketConfig.autoLayout(16, 16), 1);
        assertLayout(1, 1, capped);
        assertTrue(capped.reason().contains("at most 1 per connection (" + SocketConfig.JCCL_SOCKET_AUTO_THREADS_MAX
                + ")"), capped.reason());
        assertLayout(1, 2, SocketConfig.capped(SocketConfig.autoLayout(8, 4), 1));
        assertLayout(0, 1, SocketConfig.capped(SocketConfig.autoLayout(2, 2), 1));
        System.setProperty(SocketConfig.JCCL_SOCKET_AUTO_THREADS_MAX, "1");
        System.setProperty(SocketConfig.NCCL_SOCKET_NTHREADS, "3");
        try {
            assertEquals(3, SocketConfig.fromEnvironment().threads(), "NCCL_SOCKET_NTHREADS set: not capped");
            System.clearProperty(SocketConfig.NCCL_SOCKET_NTHREADS);
            assertTrue(SocketConfig.fromEnvironment().threads() <= 1);
            System.setProperty(SocketConfig.JCCL_SOCKET_AUTO_THREADS_MAX, "0");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, SocketConfig::fromEnvironment);
            assertTrue(e.getMessage().contains(SocketConfig.JCCL_SOCKET_AUTO_THREADS_MAX), e.getMessage());
        } finally {
            System.clearProperty(SocketConfig.JCCL_SOCKET_AUTO_THREADS_MAX);
            System.clearProperty(SocketConfig.NCCL_SOCKET_NTHREADS);
        }
    }

    @Test
    void theChosenLayoutIsExplainedAndExplicitSettingsWin() {
        SocketConfig.Settings auto = SocketConfig.fromEnvironment();
        assertTrue(auto.layoutReason().startsWith("auto: "), auto.layoutReason());
        System.setProperty(SocketConfig.NCCL_SOCKET_NTHREADS, "3");
        try {
            SocketConfig.Settings set = SocketConfig.fromEnvironment();
            assertEquals(3, set.threads());
            assertEquals(3, set.streams(), "NCCL_NSOCKS_PERTHREAD stays 1 when only the threads are set");
            assertEquals("set by " + SocketConfig.NCCL_SOCKET_NTHREADS, set.layoutReason());
        } finally {
            System.clearProperty(SocketConfig.NCCL_SOCKET_NTHREADS);
        }
    }

    @Test
    void theInlineLimitIsTheMostOnAConnectionWithoutDataStreamsUnlessSet() {
        SocketConfig.Settings auto = SocketConfig.fromEnvironment();
        assertEquals(Wire.MAX_INLINE, auto.inlineBytes(0), "no I/O threads: every payload goes on the control stream");
        assertEquals(SocketConfig.DEFAULT_INLINE, auto.inlineBytes(4), "I/O threads: only small messages skip them");
        System.setProperty(SocketConfig.NCCL_SOCKET_INLINE, "4096");
        try {
            SocketConfig.Settings set = SocketConfig.fromEnvironment();
            assertEquals(4096, set.inlineBytes(0));
            assertEquals(4096, set.inlineBytes(4));
            assertEquals(4096, set.withLayout(0, 0, 65536).inlineBytes(0), "a listener's layout keeps the setting");
        } finally {
            System.clearProperty(SocketConfig.NCCL_SOCKET_INLINE);
        }
    }

    @Test
    void callerHelpDefaultsTo200MicrosecondsAndRefusesANegativeBound() {
        assertEquals(200_000, SocketConfig.fromEnvironment().helpAfterNanos());
        System.setProperty(SocketConfig.JCCL_SOCKET_HELP_US, "0");
        try {
            assertEquals(0, SocketConfig.fromEnvironment().helpAfterNanos(), "0: callers never help");
            System.setProperty(SocketConfig.JCCL_SOCKET_HELP_US, "-5");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, SocketConfig::fromEnvironment);
            assertTrue(e.getMessage().contains(SocketConfig.JCCL_SOCKET_HELP_US), e.getMessage());
        } finally {
            System.clearProperty(SocketConfig.JCCL_SOCKET_HELP_US);
        }
    }

    @Test
    void theReceiveBufferIsCappedOnlyWhereTheHostsRanksOutnumberItsCores() {
        assertEquals(SocketConfig.OVERSUBSCRIBED_RECEIVE_BUFFER, SocketConfig.autoReceiveBuffer(4, 2));
        assertEquals(0, SocketConfig.autoReceiveBuffer(2, 2), "2 ranks on 2 cores: the kernel's autotuning");
        assertEquals(0, SocketConfig.autoReceiveBuffer(2, 16));
        assertEquals(0, SocketConfig.autoReceiveBuffer(0, 2), "no launcher count: the kernel's autotuning");
        int online = SocketConfig.onlineCpus();
        try {
            System.setProperty("LOCAL_WORLD_SIZE", String.valueOf(online + 1));
            assertEquals(SocketConfig.OVERSUBSCRIBED_RECEIVE_BUFFER, SocketConfig.fromEnvironment().receiveBuffer());
            System.setProperty("LOCAL_WORLD_SIZE", "garbage");
            System.setProperty("OMPI_COMM_WORLD_LOCAL_SIZE", String.valueOf(online + 1));
            assertEquals(SocketConfig.OVERSUBSCRIBED_RECEIVE_BUFFER, SocketConfig.fromEnvironment().receiveBuffer(),
                    "a launcher variable that is not a count is passed over for the next one");
            System.setProperty("LOCAL_WORLD_SIZE", "1");
            assertEquals(0, SocketConfig.fromEnvironment().receiveBuffer());
            System.setProperty("LOCAL_WORLD_SIZE", String.valueOf(online + 1));
            System.setProperty(SocketConfig.NCCL_SOCKET_RCVBUF, "0");
            assertEquals(0, SocketConfig.fromEnvironment().receiveBuffer(), "0: the kernel's autotuning, whatever the host");
            System.setProperty(SocketConfig.NCCL_SOCKET_RCVBUF, "256K");
            assertEquals(256 << 10, SocketConfig.fromEnvironment().receiveBuffer());
            System.setProperty(SocketConfig.NCCL_SOCKET_RCVBUF, "-5");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, SocketConfig::fromEnvironment);
            assertTrue(e.getMessage().contains(SocketConfig.NCCL_SOCKET_RCVBUF), e.getMessage());
            // 4G does not fit SO_RCVBUF's int: refused with its own value, not wrapped to 0
            System.setProperty(SocketConfig.NCCL_SOCKET_RCVBUF, "4G");
            e = assertThrows(IllegalArgumentException.class, SocketConfig::fromEnvironment);
            assertTrue(e.getMessage().contains(SocketConfig.NCCL_SOCKET_RCVBUF + "=4294967296"), e.getMessage());
        } finally {
            System.clearProperty("LOCAL_WORLD_SIZE");
            System.clearProperty("OMPI_COMM_WORLD_LOCAL_SIZE");
            System.clearProperty(SocketConfig.NCCL_SOCKET_RCVBUF);
        }
    }

    private static void assertLayout(int threads, int perThread, SocketConfig.Layout layout) {
        assertEquals(threads + "x" + perThread, layout.threads() + "x" + layout.streamsPerThread(), layout.reason());
    }
}
