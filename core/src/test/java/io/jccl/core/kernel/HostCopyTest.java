package io.jccl.core.kernel;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@link HostCopy} copies as {@link MemorySegment#copy} does, through {@code memmove} or not: the
 * same bytes at sizes either side of {@link HostCopy#MIN_BYTES} and unaligned offsets, overlapping
 * ranges in both directions, and the same exceptions for a bad range, a read-only target, a closed
 * arena and another thread's confined segment (the downcall must not skip the checks the JDK's
 * copy makes).
 */
class HostCopyTest {
    private static final long BIG = HostCopy.MIN_BYTES * 4 + 13;

    @Test
    void memmoveIsUsedOnLinux() {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "only Linux's C library is known to the build");
        assertTrue(HostCopy.isAvailable(), HostCopy.describe());
        assertTrue(HostCopy.describe().startsWith("memmove"), HostCopy.describe());
    }

    @Test
    void copiesTheSameBytesAsTheJdkAtEverySize() {
        Random random = new Random(7);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = arena.allocate(BIG + 64);
            for (long i = 0; i < src.byteSize(); i++) {
                src.set(JAVA_BYTE, i, (byte) random.nextInt());
            }
            for (long bytes : new long[]{0, 1, 4095, HostCopy.MIN_BYTES - 1, HostCopy.MIN_BYTES, BIG}) {
                for (long offset : new long[]{0, 3, 61}) {
                    MemorySegment ours = arena.allocate(BIG + 64);
                    MemorySegment jdk = arena.allocate(BIG + 64);
                    HostCopy.copy(src, offset, ours, 64 - offset, bytes);
                    MemorySegment.copy(src, offset, jdk, 64 - offset, bytes);
                    assertEquals(-1, ours.mismatch(jdk), bytes + " bytes from offset " + offset);
                }
            }
        }
    }

    @Test
    void overlappingRangesMoveAsMemmoveDoes() {
        try (Arena arena = Arena.ofConfined()) {
            for (long shift : new long[]{1, -1, 4096, -4096}) {
                MemorySegment ours = pattern(arena, BIG + 8192);
                MemorySegment jdk = pattern(arena, BIG + 8192);
                HostCopy.copy(ours, 4096, ours, 4096 + shift, BIG);
                MemorySegment.copy(jdk, 4096, jdk, 4096 + shift, BIG);
                assertEquals(-1, ours.mismatch(jdk), "shift " + shift);
            }
        }
    }

    @Test
    void aRangeOutsideEitherSegmentIsRefused() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(BIG);
            MemorySegment b = arena.allocate(BIG);
            assertThrows(IndexOutOfBoundsException.class, () -> HostCopy.copy(a, 1, b, 0, BIG));
            assertThrows(IndexOutOfBoundsException.class, () -> HostCopy.copy(a, 0, b, 1, BIG));
            assertThrows(IndexOutOfBoundsException.class, () -> HostCopy.copy(a, -1, b, 0, HostCopy.MIN_BYTES));
        }
    }

    @Test
    void aReadOnlyTargetIsRefused() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(BIG);
            MemorySegment b = arena.allocate(BIG).asReadOnly();
            assertThrows(IllegalArgumentException.class, () -> HostCopy.copy(a, 0, b, 0, BIG));
        }
    }

    @Test
    void aClosedArenaIsRefused() {
        MemorySegment a;
        MemorySegment b;
        Arena arena = Arena.ofShared();
        a = arena.allocate(BIG);
        b = arena.allocate(BIG);
        arena.close();
        assertThrows(IllegalStateException.class, () -> HostCopy.copy(a, 0, b, 0, BIG));
    }

    @Test
    void anotherThreadsConfinedSegmentIsRefused() throws InterruptedException {
        try (Arena arena = Arena.ofConfined(); Arena shared = Arena.ofShared()) {
            MemorySegment confined = arena.allocate(BIG);
            MemorySegment other = shared.allocate(BIG);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> CompletableFuture.runAsync(() -> HostCopy.copy(other, 0, confined, 0, BIG)).get());
            assertInstanceOf(WrongThreadException.class, e.getCause());
        }
    }

    private static MemorySegment pattern(Arena arena, long bytes) {
        MemorySegment s = arena.allocate(bytes);
        for (long i = 0; i < bytes; i++) {
            s.set(JAVA_BYTE, i, (byte) (i * 31 + (i >> 8)));
        }
        return s;
    }
}
