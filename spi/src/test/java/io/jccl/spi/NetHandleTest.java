package io.jccl.spi;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NetHandleTest {

    @Test
    void isOneHundredTwentyEightBytesOfNativeMemory() {
        NetHandle h = NetHandle.allocate();
        assertEquals(128, h.segment().byteSize());
        assertTrue(h.segment().isNative(), "a native plugin must be able to read the handle in place");
        assertEquals(128, h.toByteArray().length);
    }

    @Test
    void bytesRoundTripAndCopiesAreIndependent() {
        NetHandle h = NetHandle.allocate();
        h.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 3, 0x1122334455667788L);
        NetHandle copy = NetHandle.fromBytes(h.toByteArray());
        assertEquals(h, copy);
        assertEquals(h.hashCode(), copy.hashCode());
        copy.segment().set(ValueLayout.JAVA_BYTE, 127, (byte) 1);
        assertNotEquals(h, copy);
        NetHandle second = h.copy();
        h.clear();
        assertEquals(0x1122334455667788L, second.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 3));
        assertArrayEquals(new byte[128], h.toByteArray());
    }

    @Test
    void wrapWritesThroughToTheCallersMemory() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ncclBuffer = arena.allocate(256);
            NetHandle h = NetHandle.wrap(ncclBuffer);
            h.segment().set(ValueLayout.JAVA_INT, 0, 42);
            assertEquals(42, ncclBuffer.get(ValueLayout.JAVA_INT, 0));
            assertEquals(128, h.segment().byteSize());
            assertThrows(IllegalArgumentException.class, () -> NetHandle.wrap(arena.allocate(64)));
        }
    }

    @Test
    void refusesOversizedBytes() {
        assertThrows(IllegalArgumentException.class, () -> NetHandle.fromBytes(new byte[129]));
        assertEquals(NetHandle.fromBytes(new byte[] {7}), NetHandle.fromBytes(new byte[] {7, 0, 0}));
    }
}
