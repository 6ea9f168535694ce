package io.jccl.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * NVRTC, CUDA's run-time compiler, through FFM: CUDA C++ source to PTX, which the driver then
 * compiles for the GPU at hand ({@link CudaModule}). Found at run time like the driver: the library
 * {@code JCCL_NVRTC_LIBRARY} names, else {@code libnvrtc.so.13}, {@code .12}, {@code .11.2} on the
 * dynamic linker's path, or in a toolkit's {@code lib64} or {@code targets/x86_64-linux/lib}
 * ({@code $CUDA_HOME}, {@code /usr/local/cuda}, {@code /usr/local/cuda-X.Y}, newest first).
 */
@SuppressWarnings("restricted") // the binding: each descriptor is checked against nvrtc.h
public final class Nvrtc {
    /** The variable that names the NVRTC library to load, when it is not where CUDA installs it. */
    public static final String JCCL_NVRTC_LIBRARY = "JCCL_NVRTC_LIBRARY";

    private static final String[] SONAMES = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};
    private static final Linker LINKER = Linker.nativeLinker();

    private static final Throwable UNAVAILABILITY_CAUSE;
    private static final String LIBRARY;
    private static final MethodHandle CREATE_PROGRAM;
    private static final MethodHandle COMPILE_PROGRAM;
    private static final MethodHandle GET_PTX_SIZE;
    private static final MethodHandle GET_PTX;
    private static final MethodHandle GET_LOG_SIZE;
    private static final MethodHandle GET_LOG;
    private static final MethodHandle DESTROY_PROGRAM;
    private static final MethodHandle GET_ERROR_STRING;

    static {
        MethodHandle[] h = new MethodHandle[8];
        Throwable cause = null;
        String library = null;
        try {
            List<String> candidates = new ArrayList<>();
            String configured = System.getenv(JCCL_NVRTC_LIBRARY);
            if (configured != null && !configured.isBlank()) {
                candidates.add(configured);
            } else {
                candidates.addAll(List.of(SONAMES));
                for (String dir : toolkitLibraryDirectories()) {
                    for (String soname : SONAMES) {
                        if (Files.exists(Path.of(dir, soname))) {
                            candidates.add(dir + "/" + soname);
                        }
                    }
                }
            }
            SymbolLookup nvrtc = null;
            for (String name : candidates) {
                try {
                    nvrtc = SymbolLookup.libraryLookup(name, Arena.global());
                    library = name;
                    break;
                } catch (IllegalArgumentException e) {
                    // try the next one
                }
            }
            if (nvrtc == null) {
                throw new UnsatisfiedLinkError("NVRTC (CUDA's run-time compiler) not found (tried " + String.join(", ",
                        candidates) + "): install the CUDA toolkit's libnvrtc or set " + JCCL_NVRTC_LIBRARY);
            }
            h[0] = down(nvrtc, "nvrtcCreateProgram",
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
            h[1] = down(nvrtc, "nvrtcCompileProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
            h[2] = down(nvrtc, "nvrtcGetPTXSize", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
            h[3] = down(nvrtc, "nvrtcGetPTX", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
            h[4] = down(nvrtc, "nvrtcGetProgramLogSize", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
            h[5] = down(nvrtc, "nvrtcGetProgramLog", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
            h[6] = down(nvrtc, "nvrtcDestroyProgram", FunctionDescriptor.of(JAVA_INT, ADDRESS));
            h[7] = down(nvrtc, "nvrtcGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        } catch (Throwable t) {
            cause = t;
        }
        UNAVAILABILITY_CAUSE = cause;
        LIBRARY = cause == null ? library : null;
        CREATE_PROGRAM = h[0];
        COMPILE_PROGRAM = h[1];
        GET_PTX_SIZE = h[2];
        GET_PTX = h[3];
        GET_LOG_SIZE = h[4];
        GET_LOG = h[5];
        DESTROY_PROGRAM = h[6];
        GET_ERROR_STRING = h[7];
    }

    private Nvrtc() {
    }

    /** Where CUDA toolkits put their libraries: $CUDA_HOME, then /usr/local/cuda and /usr/local/cuda-X.Y, newest first. */
    private static List<String> toolkitLibraryDirectories() {
        List<String> roots = new ArrayList<>();
        String cudaHome = System.getenv("CUDA_HOME");
        if (cudaHome != null && !cudaHome.isBlank()) {
            roots.add(cudaHome);
        }
        roots.add("/usr/local/cuda");
        try (var versions = Files.list(Path.of("/usr/local"))) {
            versions.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("cuda-"))
                    .sorted(java.util.Comparator.reverseOrder()).forEach(n -> roots.add("/usr/local/" + n));
        } catch (java.io.IOException | RuntimeException e) {
            // no /usr/local: nothing more to try
        }
        List<String> dirs = new ArrayList<>();
        for (String root : roots) {
            dirs.add(root + "/lib64");
            dirs.add(root + "/targets/x86_64-linux/lib");
        }
        return dirs;
    }

    private static MethodHandle down(SymbolLookup lookup, String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(lookup.find(name).orElseThrow(
                () -> new UnsatisfiedLinkError(name + " not found in libnvrtc")), fd);
    }

    /** @return whether NVRTC was found */
    public static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /** @return why NVRTC cannot be used, or {@code null} if it can */
    public static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /** @return the library that was loaded; {@code null} if none */
    public static String library() {
        return LIBRARY;
    }

    /**
     * Compiles CUDA C++ to PTX.
     *
     * @param source  the program (no {@code #include} of files: NVRTC is given none)
     * @param name    its name in messages
     * @param options NVRTC options, e.g. {@code --gpu-architecture=compute_90}
     * @return the PTX, NUL-terminated as {@code cuModuleLoadData} wants it
     * @throws IllegalStateException with the compiler's log if the source does not compile
     */
    public static byte[] compile(String source, String name, String... options) {
        if (UNAVAILABILITY_CAUSE != null) {
            throw new UnsupportedOperationException("NVRTC cannot be used: " + UNAVAILABILITY_CAUSE.getMessage(),
                    UNAVAILABILITY_CAUSE);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment program = arena.allocate(ADDRESS);
            check("nvrtcCreateProgram", (int) CREATE_PROGRAM.invokeExact(program, arena.allocateFrom(source),
                    arena.allocateFrom(name), 0, MemorySegment.NULL, MemorySegment.NULL));
            MemorySegment p = program.get(ADDRESS, 0);
            try {
                MemorySegment opts = arena.allocate(ADDRESS, Math.max(1, options.length));
                for (int i = 0; i < options.length; i++) {
                    opts.setAtIndex(ADDRESS, i, arena.allocateFrom(options[i]));
                }
                int r = (int) COMPILE_PROGRAM.invokeExact(p, options.length, opts);
                if (r != 0) {
                    throw new IllegalStateException("NVRTC could not compile " + name + " (" + error(r) + "):\n"
                            + log(arena, p));
                }
                MemorySegment size = arena.allocate(JAVA_LONG);
                check("nvrtcGetPTXSize", (int) GET_PTX_SIZE.invokeExact(p, size));
                MemorySegment ptx = arena.allocate(size.get(JAVA_LONG, 0));
                check("nvrtcGetPTX", (int) GET_PTX.invokeExact(p, ptx));
                return ptx.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            } finally {
                int ignored = (int) DESTROY_PROGRAM.invokeExact(program);
            }
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    private static String log(Arena arena, MemorySegment program) throws Throwable {
        MemorySegment size = arena.allocate(JAVA_LONG);
        if ((int) GET_LOG_SIZE.invokeExact(program, size) != 0) {
            return "(no log)";
        }
        MemorySegment text = arena.allocate(Math.max(1, size.get(JAVA_LONG, 0)));
        if ((int) GET_LOG.invokeExact(program, text) != 0) {
            return "(no log)";
        }
        return text.getString(0);
    }

    private static void check(String call, int result) {
        if (result != 0) {
            throw new IllegalStateException(call + " failed: " + error(result));
        }
    }

    private static String error(int result) {
        try {
            return ((MemorySegment) GET_ERROR_STRING.invokeExact(result)).reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "nvrtcResult " + result;
        }
    }
}
