package io.jccl.core.transport;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetRequest;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Stores into arrays of interface types on the proxy's data path, through array-element VarHandles
 * rather than {@code aastore}. C2 compiles an {@code aastore} into an array whose element type is an
 * interface with a guess at the array's exact class that always fails (JDK 25): the compiled code
 * traps, runs in the interpreter and is compiled again, once per store site, and since each
 * recompilation inlines further sites the traps come one after another (ten sites here, eight traps
 * each, over the first seconds of a `jccl perf` run). A VarHandle casts to the array class it was
 * made for, so the compiled store needs no guess. Stores of {@code null} need no check and stay
 * plain.
 */
final class ArrayStores {
    private static final VarHandle SEGMENTS = MethodHandles.arrayElementVarHandle(MemorySegment[].class);
    private static final VarHandle HANDLES = MethodHandles.arrayElementVarHandle(MemoryHandle[].class);
    private static final VarHandle REQUESTS = MethodHandles.arrayElementVarHandle(NetRequest[].class);

    private ArrayStores() {
    }

    static void set(MemorySegment[] array, int index, MemorySegment value) {
        SEGMENTS.set(array, index, value);
    }

    static void set(MemoryHandle[] array, int index, MemoryHandle value) {
        HANDLES.set(array, index, value);
    }

    static void set(NetRequest[] array, int index, NetRequest value) {
        REQUESTS.set(array, index, value);
    }
}
