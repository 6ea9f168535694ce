package io.jccl.spi;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link SpiArrays} stores as {@code aastore} does, type check included: an array of a narrower
 * class still refuses an element of another (a VarHandle store that skipped the check would let
 * the heap hold a wrong type).
 */
class SpiArraysTest {
    private record Handle(int id) implements MemoryHandle {
    }

    private record OtherHandle(int id) implements MemoryHandle {
    }

    @Test
    void storesElementsOfEachSpiArrayType() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment[] segments = new MemorySegment[2];
            MemorySegment s = arena.allocate(16);
            SpiArrays.set(segments, 1, s);
            assertSame(s, segments[1]);
        }
        MemoryHandle[] handles = new MemoryHandle[1];
        Handle h = new Handle(1);
        SpiArrays.set(handles, 0, h);
        assertSame(h, handles[0]);
        NetRequest[] requests = new NetRequest[3];
        NetRequest r = new NetRequest() { };
        SpiArrays.set(requests, 2, r);
        assertSame(r, requests[2]);
    }

    @Test
    void anArrayOfANarrowerClassRefusesAnotherElementType() {
        MemoryHandle[] narrow = new Handle[1];
        assertThrows(ArrayStoreException.class, () -> SpiArrays.set(narrow, 0, new OtherHandle(2)));
    }
}
