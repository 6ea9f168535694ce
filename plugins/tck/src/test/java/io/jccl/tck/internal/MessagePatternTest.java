package io.jccl.tck.internal;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MessagePatternTest {

    @Test
    void aFilledSegmentMatchesItsOwnSeedAtEverySize() {
        try (Arena arena = Arena.ofConfined()) {
            for (long size : new long[] {0, 1, 7, 8, 9, 15, 17, 4097, (1 << 20) + 3}) {
                MemorySegment s = arena.allocate(Math.max(1, size)).asSlice(0, size);
                MessagePattern.fill(s, 42);
                assertEquals(-1, MessagePattern.firstMismatch(s, 42), "size " + size);
            }
        }
    }

    @Test
    void everyChangedByteIsFoundWhereItIs() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(1001);
            for (long at : new long[] {0, 7, 8, 500, 999, 1000}) {
                MessagePattern.fill(s, 7);
                s.set(ValueLayout.JAVA_BYTE, at, (byte) (s.get(ValueLayout.JAVA_BYTE, at) ^ 0x10));
                assertEquals(at, MessagePattern.firstMismatch(s, 7));
            }
        }
    }

    @Test
    void anotherMessageIsRecognisedAsSuch() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment s = arena.allocate(256);
            MessagePattern.fill(s, 2);
            assertTrue(MessagePattern.firstMismatch(s, 1) >= 0);
            String why = MessagePattern.describeMismatch(s, 1, 1, 2, 3);
            assertNotNull(why);
            assertTrue(why.contains("out of order"), why);
            assertNull(MessagePattern.describeMismatch(s, 2));
        }
    }
}
