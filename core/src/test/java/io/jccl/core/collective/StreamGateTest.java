package io.jccl.core.collective;

import io.jccl.core.CommConfig;
import io.jccl.core.JcclException;
import io.jccl.core.proxy.IdleStrategy;
import io.jccl.core.proxy.Proxy;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetResult;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A stream-ordered operation on the proxy (no GPU needed: the gate is what a CUDA stream's word
 * would be): it starts only when its gate opens, the operations behind it start after it (so that
 * receives are announced in issue order), waiting for the GPU is not a stall however long, and the
 * gate is released once whatever the outcome.
 */
class StreamGateTest {
    private static final long TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(300);

    /** A gate opened by the test; records its releases. */
    private static final class TestGate implements StreamGate {
        final AtomicBoolean open = new AtomicBoolean();
        final List<Boolean> releases = new CopyOnWriteArrayList<>();
        volatile RuntimeException failure;

        @Override
        public boolean isOpen() {
            RuntimeException f = failure;
            if (f != null) {
                throw f;
            }
            return open.get();
        }

        @Override
        public void release(boolean succeeded) {
            releases.add(succeeded);
        }
    }

    /** A task that records when it started, in a shared order, and then finishes at once. */
    private static final class Marker extends Task {
        final String name;
        final List<String> order;

        Marker(String name, List<String> order) {
            this.name = name;
            this.order = order;
        }

        @Override
        void start() {
            order.add(name);
        }

        @Override
        int progress() {
            done = true;
            return 1;
        }

        @Override
        String waitingFor() {
            return "nothing";
        }

        @Override
        int blockingPeer() {
            return -1;
        }
    }

    private static Proxy proxy(AtomicInteger failures) {
        Proxy p = new Proxy("test-proxy", List.of(), IdleStrategy.of(CommConfig.ProxyIdle.YIELD), TIMEOUT_NANOS,
                r -> "rank " + r, NetLogger.noop(), e -> failures.incrementAndGet(),
                (op, peer, why) -> new JcclException(NetResult.TIMEOUT, why), false, false);
        p.start();
        return p;
    }

    @Test
    void aGatedOperationWaitsForItsGateLongerThanTheTimeoutAndTheOnesBehindItStartAfterIt() throws Exception {
        AtomicInteger failures = new AtomicInteger();
        Proxy p = proxy(failures);
        try {
            List<String> order = new CopyOnWriteArrayList<>();
            TestGate gate = new TestGate();
            Operation gated = new Operation("gated", new Marker("gated", order));
            gated.setGate(gate);
            Operation behind = new Operation("behind", new Marker("behind", order));
            gated.markSubmitted(1);
            behind.markSubmitted(2);
            p.submit(gated);
            p.submit(behind);
            Thread.sleep(TimeUnit.NANOSECONDS.toMillis(3 * TIMEOUT_NANOS));
            assertFalse(gated.isDone(), "a closed gate holds the operation");
            assertFalse(behind.isDone(), "and the one issued after it");
            assertEquals(List.of(), order, "neither started (no receive announced)");
            assertEquals(0, failures.get(), "waiting for the GPU three timeouts long is not a stall");
            gate.open.set(true);
            assertTrue(behind.await(Duration.ofSeconds(10)));
            assertTrue(gated.isDone());
            assertEquals(List.of("gated", "behind"), order, "started in issue order");
            assertEquals(List.of(true), gate.releases, "released once, successfully");
        } finally {
            p.stop(TimeUnit.SECONDS.toNanos(5));
        }
    }

    @Test
    void aGateThatFailsFailsItsOperationAndStillReleasesTheStream() throws Exception {
        AtomicInteger failures = new AtomicInteger();
        Proxy p = proxy(failures);
        try {
            TestGate gate = new TestGate();
            Operation gated = new Operation("gated", new Marker("gated", new CopyOnWriteArrayList<>()));
            gated.setGate(gate);
            gated.markSubmitted(1);
            p.submit(gated);
            gate.failure = new JcclException(NetResult.UNHANDLED_CUDA_ERROR, "the stream failed");
            JcclException e = assertThrows(JcclException.class, () -> gated.await(Duration.ofSeconds(10)));
            assertEquals(NetResult.UNHANDLED_CUDA_ERROR, e.result());
            assertTrue(e.getMessage().contains("the stream failed"), e.getMessage());
            assertEquals(List.of(false), gate.releases, "the stream goes on, told the output is not valid");
        } finally {
            p.stop(TimeUnit.SECONDS.toNanos(5));
        }
    }
}
