package io.jccl.spi;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Stores into the SPI's arrays of interface types ({@code MemorySegment[]}, {@code MemoryHandle[]},
 * {@code NetRequest[]}, as {@link RecvComm}'s grouped receives and a proxy's request slots use
 * them) for data paths that must not stall the JIT. C2 compiles an {@code aastore} into an array
 * whose element type is an interface with a guess at the array's exact class that always fails
 * (JDK 25): the compiled code traps, runs in the interpreter and is compiled again, once per store
 * site, and since each recompilation inlines further sites the traps come one after another.
 * Under NCCL the shim's {@code irecv} and the stores it inlines took all of nccl-tests'
 * 20 000-iteration warm-up to settle. An array-element VarHandle casts to the array class it was
 * made for, so its compiled store needs no guess. A store of {@code null} needs no check: write it
 * plainly.
 */
public final class SpiArrays {
    private static final VarHandle SEGMENTS = MethodHandles.arrayElementVarHandle(MemorySegment[].class);
    private static final VarHandle HANDLES = MethodHandles.arrayElementVarHandle(MemoryHandle[].class);
    private static final VarHandle REQUESTS = MethodHandles.arrayElementVarHandle(NetRequest[].class);

    private SpiArrays() {
    }

    /** {@code array[index] = value}, without a speculative array-store check. */
    public static void set(MemorySegment[] array, int index, MemorySegment value) {
        SEGMENTS.set(array, index, value);
    }

    /** {@code array[index] = value}, without a speculative array-store check. */
    public static void set(MemoryHandle[] array, int index, MemoryHandle value) {
        HANDLES.set(array, index, value);
    }

    /** {@code array[index] = value}, without a speculative array-store check. */
    public static void set(NetRequest[] array, int index, NetRequest value) {
        REQUESTS.set(array, index, value);
    }
}
