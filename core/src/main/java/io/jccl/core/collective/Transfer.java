package io.jccl.core.collective;

import java.lang.foreign.MemorySegment;

/**
 * One send or receive of a group: {@code bytes} bytes at {@code offset} of {@code buffer}.
 *
 * @param buffer the user's buffer
 * @param offset where the bytes start in it
 * @param bytes  how many
 */
public record Transfer(MemorySegment buffer, long offset, long bytes) {
}
