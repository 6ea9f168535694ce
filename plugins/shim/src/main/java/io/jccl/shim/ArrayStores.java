package io.jccl.shim;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetRequest;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.foreign.MemorySegment;

/**
 * Stores into arrays of interface types on the data path, through array-element VarHandles rather
 * than {@code aastore}. C2 compiles an {@code aastore} into an array whose element type is an
 * interface with a guess at the array's exact class that always fails (JDK 25): the compiled code
 * traps, runs in the interpreter, and is compiled again, once per store site, and since each
 * recompilation inlines the next site the traps come one after another. Under NCCL the data path's
 * six such sites (isend, irecv, test and the stores they inline) took the whole of nccl-tests'
 * 20 000-iteration warm-up to settle: the 8-byte all_reduce ran 28.7 to 32.0 us after it and 24.0 to
 * 26.6 us after 100 000 (H200, one call). A VarHandle casts to the array's class it was made for,
 * so the compiled store needs no guess.
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
