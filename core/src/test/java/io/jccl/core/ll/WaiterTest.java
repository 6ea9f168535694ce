package io.jccl.core.ll;

import io.jccl.core.JcclException;
import io.jccl.spi.NetResult;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The calling thread's wait in a small operation. If the first two fail, check the spin counts in
 * {@link Waiter}: over the network every idle round is a read syscall, and on a host with more
 * ranks than cores each spin is time taken from the rank waited for.
 */
class WaiterTest {
    private static final LowLatencyPath.Diagnosis NO_DIAGNOSIS = (sequence, operation, peer, reason) ->
            new JcclException(NetResult.REMOTE_ERROR, peer, reason);

    private static Waiter waiter(boolean oversubscribed, AtomicReference<JcclException> failure, long timeoutNanos) {
        Waiter w = new Waiter(failure::get, NO_DIAGNOSIS, timeoutNanos, oversubscribed);
        w.begin("allReduce", 7);
        return w;
    }

    @Test
    void onAHostWithMoreRanksThanCoresTheFirstIdleRoundGivesTheCoreUp() {
        Waiter w = waiter(true, new AtomicReference<>(), TimeUnit.SECONDS.toNanos(30));
        w.idle(1, "the contribution");
        assertEquals(1, w.giveUps(), "the rank waited for may need this core: no spinning first");
    }

    @Test
    void withACorePerRankItSpinsBeforeGivingTheCoreUpAndSpinsAgainAfterProgress() {
        Waiter w = waiter(false, new AtomicReference<>(), TimeUnit.SECONDS.toNanos(30));
        for (int i = 1; i < Waiter.SPINS; i++) {
            w.idle(1, "the contribution");
        }
        assertEquals(0, w.giveUps(), "a peer on its own core answers within a few spins");
        w.idle(1, "the contribution");
        assertEquals(1, w.giveUps());
        w.progressed();
        w.idle(1, "the contribution");
        assertEquals(1, w.giveUps(), "after progress the next wait spins first again");
    }

    @Test
    void theCommunicatorsFailureEndsTheWaitAtTheNextIdleRound() {
        AtomicReference<JcclException> failure = new AtomicReference<>();
        Waiter w = waiter(true, failure, TimeUnit.SECONDS.toNanos(30));
        w.idle(2, "the contribution");
        failure.set(new JcclException(NetResult.REMOTE_ERROR, 2, "rank 2 left"));
        JcclException e = assertThrows(JcclException.class, () -> w.idle(2, "the contribution"));
        assertEquals(NetResult.REMOTE_ERROR, e.result());
        assertEquals(2, e.failedRank());
        assertTrue(e.getMessage().contains("allReduce #7 failed: rank 2 left"), e.getMessage());
    }

    @Test
    void aWaitPastTheTimeoutNamesTheOperationTheRankAndWhatWasAwaited() {
        Waiter w = waiter(true, new AtomicReference<>(), TimeUnit.MILLISECONDS.toNanos(20));
        long start = System.nanoTime();
        JcclException e = assertThrows(JcclException.class, () -> {
            while (System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10)) {
                w.idle(3, "a free slot to send");
            }
        });
        assertEquals(3, e.failedRank());
        assertTrue(e.getMessage().matches("allReduce #7 made no progress for \\d+ ms \\(JCCL_TIMEOUT_MS\\) waiting for "
                + "a free slot to send \\(rank 3\\)"), e.getMessage());
    }
}
