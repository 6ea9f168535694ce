package io.jccl.nativenet;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The dynamic linker, called directly (as NCCL does) rather than through
 * {@link SymbolLookup#libraryLookup}: NCCL's flags ({@code RTLD_NOW | RTLD_LOCAL}), dlerror's exact
 * message for a library that does not load, and dladdr to say which file was found.
 */
@SuppressWarnings("restricted") // FFM by design: native memory and calls are this class's job
final class Dl {
    static final int RTLD_NOW = 0x2;
    static final int RTLD_LOCAL = 0;

    private static final MethodHandle DLOPEN;
    private static final MethodHandle DLSYM;
    private static final MethodHandle DLERROR;
    private static final MethodHandle DLADDR;

    static {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        DLOPEN = linker.downcallHandle(libc.find("dlopen").orElseThrow(), FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_INT));
        DLSYM = linker.downcallHandle(libc.find("dlsym").orElseThrow(), FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, ADDRESS));
        DLERROR = linker.downcallHandle(libc.find("dlerror").orElseThrow(), FunctionDescriptor.of(JAVA_LONG));
        DLADDR = linker.downcallHandle(libc.find("dladdr").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
    }

    private Dl() {
    }

    /** The result of {@link #open}: a handle, or dlerror's message. */
    record Opened(long handle, String error) {
        boolean notFound() {
            return handle == 0 && error != null && error.contains("No such file or directory");
        }
    }

    /** dlopen and, on failure, dlerror, on one thread (dlerror is per thread). */
    static synchronized Opened open(String name, int flags) {
        try (Arena arena = Arena.ofConfined()) {
            long handle = (long) DLOPEN.invokeExact(arena.allocateFrom(name), flags);
            return new Opened(handle, handle == 0 ? error() : null);
        } catch (Throwable e) {
            return new Opened(0, "dlopen(" + name + ") failed: " + e);
        }
    }

    /** @return the symbol's address, or 0 if absent (an indirect symbol whose resolver said NULL too) */
    static long symbol(long handle, String name) {
        try (Arena arena = Arena.ofConfined()) {
            return (long) DLSYM.invokeExact(handle, arena.allocateFrom(name));
        } catch (Throwable e) {
            return 0;
        }
    }

    /** @return the file that holds {@code address}, or {@code null} */
    static String fileOf(long address) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment info = arena.allocate(32, 8);
            int ok = (int) DLADDR.invokeExact(address, info);
            long name = info.get(JAVA_LONG, 0);
            return ok == 0 || name == 0 ? null : MemorySegment.ofAddress(name).reinterpret(4096).getString(0);
        } catch (Throwable e) {
            return null;
        }
    }

    private static String error() throws Throwable {
        long message = (long) DLERROR.invokeExact();
        return message == 0 ? "unknown dlopen error" : MemorySegment.ofAddress(message).reinterpret(4096).getString(0);
    }
}
