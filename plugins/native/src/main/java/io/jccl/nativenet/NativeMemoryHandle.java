package io.jccl.nativenet;

import io.jccl.spi.MemoryHandle;

/** A native plugin's {@code mhandle}, with the comm it was registered on. */
final class NativeMemoryHandle implements MemoryHandle {
    final NativeComm comm;
    final long pointer;
    volatile boolean released;

    NativeMemoryHandle(NativeComm comm, long pointer) {
        this.comm = comm;
        this.pointer = pointer;
    }

    @Override
    public String toString() {
        return "NativeMemoryHandle[0x" + Long.toHexString(pointer) + "]";
    }
}
