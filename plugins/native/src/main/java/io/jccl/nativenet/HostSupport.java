package io.jccl.nativenet;

import io.jccl.spi.LogLevel;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.CodeSource;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code libjccl-nativehost.so}: the logger and profiler callbacks that native plugins receive from
 * {@code init}. The logger is printf-style (variadic), which an FFM upcall cannot be, so a few lines
 * of C format each line and pass it to {@link #sink}, which hands it to the {@link NetLogger} of the
 * most recent {@code init} (NCCL too has one logger per process).
 *
 * <p>The library is found beside this module's jar (where the launcher unpacks it) or in its
 * classes folder; otherwise it is copied out of the jar into a temporary file.
 */
@SuppressWarnings("restricted") // FFM by design: native memory and calls are this class's job
final class HostSupport {
    static final String LIBRARY = "libjccl-nativehost.so";
    private static final String RESOURCE = "META-INF/native/linux-" + System.getProperty("os.arch") + "/" + LIBRARY;
    private static HostSupport instance;

    /** The {@code ncclDebugLogger_t} to pass to plugins. */
    final long logger;
    /** The {@code ncclProfilerCallback_t} to pass to plugins (v10+). */
    final long profiler;
    private final MethodHandle setSink;
    private final MemorySegment sinkStub;
    private volatile NetLogger current = NetLogger.noop();

    private HostSupport(Path library) throws ReflectiveOperationException {
        SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        Linker linker = Linker.nativeLinker();
        logger = lookup.find("jccl_host_logger").orElseThrow().address();
        profiler = lookup.find("jccl_host_profiler").orElseThrow().address();
        setSink = linker.downcallHandle(lookup.find("jccl_host_set_log_sink").orElseThrow(),
                FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        MethodHandle target = MethodHandles.lookup().findVirtual(HostSupport.class, "sink",
                MethodType.methodType(void.class, int.class, long.class, MemorySegment.class, int.class,
                        MemorySegment.class)).bindTo(this);
        sinkStub = linker.upcallStub(target, FunctionDescriptor.ofVoid(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_INT, ADDRESS),
                Arena.global());
    }

    /** @return the support library, loaded once per JVM */
    static synchronized HostSupport get() throws NetException {
        if (instance == null) {
            Path library = locate();
            try {
                instance = new HostSupport(library);
            } catch (ReflectiveOperationException | RuntimeException e) {
                throw NetException.systemError("cannot load " + library + ": " + e, e);
            }
        }
        return instance;
    }

    /** Sends the lines of every plugin's logger to {@code logger} from now on. */
    void use(NetLogger logger) {
        current = logger;
        int level = LogLevel.NONE.code();
        for (LogLevel l : LogLevel.values()) {
            if (l != LogLevel.NONE && logger.isEnabled(l, LogSubsystem.ALL)) {
                level = Math.max(level, l.code());
            }
        }
        try {
            setSink.invokeExact(sinkStub, level);
        } catch (Throwable e) {
            throw new IllegalStateException("jccl_host_set_log_sink failed", e);
        }
    }

    private void sink(int level, long flags, MemorySegment file, int line, MemorySegment message) {
        try {
            NetLogger l = current;
            LogLevel lineLevel = LogLevel.fromCode(level);
            if (l.isEnabled(lineLevel, flags)) {
                l.log(lineLevel, flags, message.reinterpret(Integer.MAX_VALUE).getString(0));
            }
        } catch (Throwable e) {
            // A failing logger must never unwind into the plugin's C code.
        }
    }

    private static Path locate() throws NetException {
        String configured = System.getProperty("jccl.nativehost.library");
        if (configured != null) {
            return Path.of(configured);
        }
        CodeSource source = HostSupport.class.getProtectionDomain().getCodeSource();
        if (source != null && source.getLocation() != null) {
            try {
                Path where = Path.of(source.getLocation().toURI());
                Path candidate = Files.isDirectory(where) ? where.resolve(RESOURCE) : where.resolveSibling(LIBRARY);
                if (Files.isRegularFile(candidate)) {
                    return candidate;
                }
            } catch (URISyntaxException | IllegalArgumentException e) {
                // Not a file location; fall back to the copy below.
            }
        }
        try (InputStream in = HostSupport.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw NetException.systemError("the native-plugin host has no " + RESOURCE + " for this platform ("
                        + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ")");
            }
            Path copy = Files.createTempFile("jccl-nativehost-", ".so");
            copy.toFile().deleteOnExit();
            Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
            return copy;
        } catch (IOException e) {
            throw NetException.systemError("cannot copy " + RESOURCE + " to a temporary file: " + e.getMessage(), e);
        }
    }
}
