package io.jccl.tck.internal;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The contents of every message the kit sends: a pseudo-random sequence determined by a seed and
 * the byte offset, so a receiver can verify any message without a copy of what was sent, and a
 * message delivered into the wrong receive, shifted, truncated or stale is told apart from the
 * right one.
 *
 * <p>Works on 8-byte words straight in the {@link MemorySegment} (native memory, no {@code byte[]}):
 * filling and checking 256 MiB takes well under a second.
 */
public final class MessagePattern {
    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED;

    private MessagePattern() {
    }

    /** SplitMix64's finaliser: a fast bijective mix. */
    private static long word(long seed, long index) {
        long z = seed + (index + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Fills {@code segment} with the pattern of {@code seed}. */
    public static void fill(MemorySegment segment, long seed) {
        long size = segment.byteSize();
        long words = size >>> 3;
        for (long i = 0; i < words; i++) {
            segment.set(WORD, i << 3, word(seed, i));
        }
        long tail = words << 3;
        if (tail < size) {
            long w = word(seed, words);
            for (long off = tail; off < size; off++) {
                segment.set(ValueLayout.JAVA_BYTE, off, (byte) (w >>> ((off - tail) * 8)));
            }
        }
    }

    /**
     * @return the offset of the first byte of {@code segment} that differs from the pattern of
     *         {@code seed}, or {@code -1} if all match
     */
    public static long firstMismatch(MemorySegment segment, long seed) {
        long size = segment.byteSize();
        long words = size >>> 3;
        for (long i = 0; i < words; i++) {
            long expected = word(seed, i);
            long actual = segment.get(WORD, i << 3);
            if (actual != expected) {
                return (i << 3) + (Long.numberOfTrailingZeros(actual ^ expected) >>> 3);
            }
        }
        long tail = words << 3;
        if (tail < size) {
            long w = word(seed, words);
            for (long off = tail; off < size; off++) {
                if (segment.get(ValueLayout.JAVA_BYTE, off) != (byte) (w >>> ((off - tail) * 8))) {
                    return off;
                }
            }
        }
        return -1;
    }

    /**
     * @return a description of where {@code segment} departs from the pattern of {@code seed}, or
     *         {@code null} if it does not: the offset, and whether the bytes there belong to another
     *         of the {@code otherSeeds} (a message delivered to the wrong receive)
     */
    public static String describeMismatch(MemorySegment segment, long seed, long... otherSeeds) {
        long at = firstMismatch(segment, seed);
        if (at < 0) {
            return null;
        }
        StringBuilder sb = new StringBuilder("bytes differ from what was sent from offset ").append(at)
                .append(" of ").append(segment.byteSize());
        for (long other : otherSeeds) {
            if (other != seed && segment.byteSize() > 0 && firstMismatch(segment.asSlice(0, Math.min(64,
                    segment.byteSize())), other) < 0) {
                sb.append("; they hold the start of another message (pattern seed 0x")
                        .append(Long.toHexString(other)).append("): messages were delivered out of order");
                break;
            }
        }
        return sb.toString();
    }
}
