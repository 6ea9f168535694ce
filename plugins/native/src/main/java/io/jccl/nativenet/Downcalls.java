package io.jccl.nativenet;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Downcall handles by C signature, not by address: the function pointer of a plugin's table is the
 * first argument ({@code MemorySegment}), so each handle is a constant the JIT inlines, whatever
 * library it calls. Every pointer is passed as a {@code long} (LP64), so the data path allocates no
 * segments. Names spell the arguments: {@code L} a pointer or 64-bit integer, {@code I} a 32-bit
 * one; all return {@code ncclResult_t}.
 */
@SuppressWarnings("restricted") // FFM by design: native memory and calls are this class's job
final class Downcalls {
    private Downcalls() {
    }

    private static final ValueLayout L = JAVA_LONG;
    private static final ValueLayout I = JAVA_INT;

    static final MethodHandle I_L = of(L);
    static final MethodHandle I_LL = of(L, L);
    static final MethodHandle I_LLL = of(L, L, L);
    static final MethodHandle I_LLLLL = of(L, L, L, L, L);
    static final MethodHandle I_IL = of(I, L);
    static final MethodHandle I_IIL = of(I, I, L);
    static final MethodHandle I_ILL = of(I, L, L);
    static final MethodHandle I_LILL = of(L, I, L, L);
    static final MethodHandle I_ILLL = of(I, L, L, L);
    static final MethodHandle I_ILLLL = of(I, L, L, L, L);
    static final MethodHandle I_LILLL = of(L, I, L, L, L);
    static final MethodHandle I_LIILL = of(L, I, I, L, L);
    static final MethodHandle I_LLIIL = of(L, L, I, I, L);
    static final MethodHandle I_LLLIL = of(L, L, L, I, L);
    static final MethodHandle I_LLILL = of(L, L, I, L, L);
    static final MethodHandle I_LLLILIL = of(L, L, L, I, L, I, L);
    static final MethodHandle I_LLIILL = of(L, L, I, I, L, L);
    static final MethodHandle I_LLLILL = of(L, L, L, I, L, L);
    static final MethodHandle I_LLLILLL = of(L, L, L, I, L, L, L);
    static final MethodHandle I_LILLLL = of(L, I, L, L, L, L);
    static final MethodHandle I_LILLLLL = of(L, I, L, L, L, L, L);
    static final MethodHandle I_LILLLLLL = of(L, I, L, L, L, L, L, L);
    static final MethodHandle I_LLLIIILLL = of(L, L, L, I, I, I, L, L, L);
    static final MethodHandle I_LLLLIILLL = of(L, L, L, L, I, I, L, L, L);

    private static MethodHandle of(MemoryLayout... args) {
        return Linker.nativeLinker().downcallHandle(FunctionDescriptor.of(JAVA_INT, args));
    }
}
