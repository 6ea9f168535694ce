package io.jccl.shim;

import io.jccl.nativenet.NativeCollNetPlugin;
import io.jccl.nativenet.NativeNetPlugin;
import io.jccl.nativenet.NativePluginLibrary;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;

import java.io.File;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Set;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Test helper: where the build put the shim library and the C driver, the class path the shim needs
 * (spi, shim, net-socket), and the shim's library loaded into this JVM through the native host.
 */
@SuppressWarnings("restricted") // FFM by design: native memory and calls are this class's job
final class ShimLibrary {
    private static final MethodHandle SETENV = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("setenv").orElseThrow(),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));

    private ShimLibrary() {
    }

    static Path library() {
        return Path.of(System.getProperty("jccl.shim.library", "target/native/libnccl-net.so")).toAbsolutePath();
    }

    static Path driver() {
        return Path.of(System.getProperty("jccl.shim.driver", "target/native/jccl-shim-driver")).toAbsolutePath();
    }

    static Path cSources() {
        return Path.of(System.getProperty("jccl.shim.sources", "src/main/c")).toAbsolutePath();
    }

    /** The class path a JVM started by the shim needs: the spi, the shim's Java half, JcclSocket. */
    static String classPath() {
        // Deliberately without jccl-cuda: JcclSocket must run on TCP alone from hand-picked jars.
        return classPath(NetPlugin.class, ShimBridge.class, io.jccl.net.socket.SocketNetPlugin.class);
    }

    /** @return the class path of the jars or directories that hold {@code classes} */
    static String classPath(Class<?>... classes) {
        Set<String> entries = new LinkedHashSet<>();
        for (Class<?> c : classes) {
            try {
                entries.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
            } catch (URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    /**
     * Sets a variable of this process's C environment, which the shim reads (Java's own copy,
     * {@link System#getenv}, does not change).
     */
    static synchronized void setenv(String name, String value) {
        try (Arena arena = Arena.ofConfined()) {
            int rc = (int) SETENV.invokeExact(arena.allocateFrom(name), arena.allocateFrom(value), 1);
            if (rc != 0) {
                throw new IllegalStateException("setenv " + name + " failed");
            }
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    /** The shim's ncclCollNet, exported at most as {@code maxVersion}, loaded back into this JVM. */
    static NativeCollNetPlugin collNet(int maxVersion) throws NetException {
        setenv(ShimConfig.JCCL_SHIM_MAX_API_VERSION, Integer.toString(maxVersion));
        try {
            return NativePluginLibrary.open(library().toString()).collNetPlugin().orElseThrow();
        } finally {
            setenv(ShimConfig.JCCL_SHIM_MAX_API_VERSION, "12");
        }
    }

    /** The shim's ncclNet, exported at most as {@code maxVersion}, loaded back into this JVM. */
    static NativeNetPlugin net(int maxVersion) throws NetException {
        setenv(ShimConfig.JCCL_SHIM_MAX_API_VERSION, Integer.toString(maxVersion));
        try {
            return NativePluginLibrary.open(library().toString()).netPlugin().orElseThrow();
        } finally {
            setenv(ShimConfig.JCCL_SHIM_MAX_API_VERSION, "12");
        }
    }
}
