package io.jccl.core;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The staging memory of in-place sends is handed out again once the operation using it is done,
 * never while it runs, and grows with the calls.
 */
class OverlapStagingTest {

    /** An operation whose completion the test decides. */
    private static final class Op implements Completion {
        boolean done;

        @Override
        public boolean isDone() {
            return done;
        }

        @Override
        public void await() {
        }

        @Override
        public boolean await(Duration timeout) {
            return done;
        }

        @Override
        public JcclException error() {
            return null;
        }
    }

    @Test
    void memoryIsReusedOnlyOnceItsOperationIsDone() {
        OverlapStaging staging = new OverlapStaging();
        Op first = new Op();
        MemorySegment a = staging.take(1 << 20, first);
        Op second = new Op();
        MemorySegment b = staging.take(1 << 20, second);
        assertNotEquals(a.address(), b.address(), "the first call still runs: the second gets memory of its own");
        first.done = true;
        MemorySegment c = staging.take(4096, new Op());
        assertEquals(a.address(), c.address(), "the first call is done: its memory serves the next");
        assertEquals(4096, c.byteSize());
        assertEquals(2, staging.kept());
        assertEquals(0, a.address() % 64, "64-byte aligned");
    }

    @Test
    void aFreeBufferTooSmallIsReplacedNotKeptBeside() {
        OverlapStaging staging = new OverlapStaging();
        Op small = new Op();
        staging.take(4096, small);
        small.done = true;
        MemorySegment big = staging.take(8 << 20, new Op());
        assertTrue(big.byteSize() >= 8 << 20);
        assertEquals(1, staging.kept(), "the small free buffer made room for the big one");
    }
}
