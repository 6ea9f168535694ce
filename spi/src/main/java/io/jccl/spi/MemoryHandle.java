package io.jccl.spi;

/**
 * A memory registration returned by {@code regMr} or {@code regMrDmaBuf} (NCCL's {@code
 * mhandle}), passed back to the data calls and to {@code deregMr}.
 */
public interface MemoryHandle {
}
