package io.jccl.net.ib;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.PointerType;

/**
 * A {@code regMr} result: the range the caller registered and the shared registration behind it.
 * Data calls accept any sub-range of {@link #address()} .. {@code address + length}.
 */
final class IbMemoryHandle implements MemoryHandle {
    final Hca hca;
    final RegistrationCache.Registration registration;
    final long address;
    final long length;
    final PointerType type;
    final int lkey;
    final int rkey;
    volatile boolean released;

    IbMemoryHandle(Hca hca, RegistrationCache.Registration registration, long address, long length, PointerType type) {
        this.hca = hca;
        this.registration = registration;
        this.address = address;
        this.length = length;
        this.type = type;
        this.lkey = registration.lkey;
        this.rkey = registration.rkey;
    }

    long address() {
        return address;
    }

    /** @return whether {@code [addr, addr + size)} lies inside the registered range */
    boolean covers(long addr, long size) {
        return addr >= address && addr + size <= address + length;
    }

    @Override
    public String toString() {
        return "IbMemoryHandle[" + hca.name + ", 0x" + Long.toHexString(address) + "+" + length + ", " + type
                + ", lkey 0x" + Integer.toHexString(lkey) + "]";
    }
}
