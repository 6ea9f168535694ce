package io.jccl.nativenet;

import io.jccl.spi.LogLevel;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetResult;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The host against deliberately faulty plugins (src/test/c/faulty_plugin.c, one library per fault):
 * every failure is a NetException that names the plugin and the code, and the host never calls a
 * plugin where NCCL would not. Each plugin records such calls (where a real one would crash the
 * JVM), and each test ends by asserting there were none.
 */
@SuppressWarnings("restricted")
class FaultyPluginTest {
    private static final Path DIR = Path.of("target/faulty-plugins").toAbsolutePath();

    /** A plugin library and its test hooks ({@code faulty_violations}, {@code faulty_init_calls}). */
    private record Faulty(String file, MethodHandle violationsHandle, MethodHandle initCallsHandle) {
        static Faulty of(String name) {
            Path lib = DIR.resolve(name);
            assertTrue(Files.isRegularFile(lib), lib + " is built by this module's test-compile phase");
            SymbolLookup lookup = SymbolLookup.libraryLookup(lib, Arena.global());
            Linker linker = Linker.nativeLinker();
            return new Faulty(lib.toString(),
                    linker.downcallHandle(lookup.find("faulty_violations").orElseThrow(), FunctionDescriptor.of(ADDRESS)),
                    linker.downcallHandle(lookup.find("faulty_init_calls").orElseThrow(), FunctionDescriptor.of(JAVA_INT)));
        }

        NativeNetPlugin plugin() throws NetException {
            return NativePluginLibrary.open(file).netPlugin().orElseThrow();
        }

        String violations() throws Throwable {
            return ((MemorySegment) violationsHandle.invokeExact()).reinterpret(4096).getString(0);
        }

        int initCalls() throws Throwable {
            return (int) initCallsHandle.invokeExact();
        }
    }

    private static final class Lines implements NetLogger {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public void log(LogLevel level, long subsystems, String message) {
            lines.add(level + " " + message);
        }

        @Override
        public boolean isEnabled(LogLevel level, long subsystems) {
            return true;
        }
    }

    @Test
    void aFailedInitIsOneClearErrorAndNothingEntersThePluginAfterIt() throws Throwable {
        Faulty f = Faulty.of("libnccl-net-faulty-init.so");
        NativeNetPlugin p = f.plugin();
        Lines log = new Lines();
        NetException e = assertThrows(NetException.class, () -> p.init(log));
        assertEquals(NetResult.SYSTEM_ERROR, e.result());
        assertEquals("FaultyInit: init returned 2 (ncclSystemError); the plugin's log says why, and NCCL would "
                + "disable the plugin", e.getMessage());
        assertTrue(log.lines.contains("WARN faulty plugin: init fails on purpose"), log.lines.toString());

        NetHandle h = NetHandle.allocate();
        for (NetException later : List.of(
                assertThrows(NetException.class, () -> p.init(log)),
                assertThrows(NetException.class, p::devices),
                assertThrows(NetException.class, () -> p.getProperties(0)),
                assertThrows(NetException.class, () -> p.listen(0, h)),
                assertThrows(NetException.class, () -> p.connect(0, h)),
                assertThrows(NetException.class, () -> f.plugin().init(log)))) {
            assertEquals(NetResult.SYSTEM_ERROR, later.result(), later.getMessage());
            assertTrue(later.getMessage().startsWith("FaultyInit: ") && later.getMessage().contains("not called")
                    && later.getMessage().contains("init returned 2"), later.getMessage());
        }
        p.close();
        assertEquals(1, f.initCalls(), "init is entered once: NCCL disables a plugin whose init failed");
        assertEquals("", f.violations());
    }

    @Test
    void zeroDevicesIsAStateNotACrash() throws Throwable {
        Faulty f = Faulty.of("libnccl-net-faulty-nodev.so");
        NativeNetPlugin p = f.plugin();
        p.init(NetLogger.noop());
        assertEquals(0, p.devices());
        NetException props = assertThrows(NetException.class, () -> p.getProperties(0));
        assertEquals(NetResult.INVALID_USAGE, props.result());
        assertEquals("FaultyNoDevices reports 0 devices, so NCCL does not use it: getProperties not called",
                props.getMessage());
        assertThrows(NetException.class, () -> p.listen(0, NetHandle.allocate()));
        NativeNetPlugin second = f.plugin();
        second.init(NetLogger.noop());
        assertEquals(0, second.devices());
        p.close();
        second.close();
        assertEquals(1, f.initCalls(), "NCCL disables a plugin without devices: no second init");
        assertEquals("", f.violations());
    }

    @Test
    void errorsFromGetPropertiesAndListenAreNetExceptions() throws Throwable {
        Faulty f = Faulty.of("libnccl-net-faulty-props.so");
        NativeNetPlugin p = f.plugin();
        p.init(NetLogger.noop());
        assertEquals(1, p.devices());
        NetException props = assertThrows(NetException.class, () -> p.getProperties(0));
        assertEquals(NetResult.INTERNAL_ERROR, props.result());
        assertEquals("FaultyProps getProperties(0) returned 3 (ncclInternalError); the plugin's log says why",
                props.getMessage());
        NetException outOfRange = assertThrows(NetException.class, () -> p.getProperties(1));
        assertEquals(NetResult.INVALID_ARGUMENT, outOfRange.result());
        assertTrue(outOfRange.getMessage().contains("not called: the plugin has 1 device"), outOfRange.getMessage());
        assertThrows(NetException.class, () -> p.getProperties(-1));
        NetException listen = assertThrows(NetException.class, () -> p.listen(0, NetHandle.allocate()));
        assertEquals(NetResult.INTERNAL_ERROR, listen.result());
        p.close();
        NetException closed = assertThrows(NetException.class, p::devices);
        assertTrue(closed.getMessage().contains("after close"), closed.getMessage());
        assertEquals("", f.violations());
    }

    @Test
    void aV10PluginIsInitialisedOncePerLoadWithALoggerAndAProfilerCallback() throws Throwable {
        Faulty f = Faulty.of("libnccl-net-faulty-v10.so");
        Lines log = new Lines();
        NativeNetPlugin first = f.plugin();
        NativeNetPlugin second = f.plugin();
        first.init(log);
        second.init(log);
        assertEquals(1, f.initCalls(), "NCCL's compat layer runs a v10 init once per load");
        assertTrue(log.lines.contains("INFO faulty plugin: init 1, fault 4, logging works"), log.lines.toString());
        assertEquals(1, second.devices());
        assertEquals("faulty0", second.getProperties(0).name());
        NetException connect = assertThrows(NetException.class, () -> first.connect(0, NetHandle.allocate()));
        assertEquals(NetResult.SYSTEM_ERROR, connect.result());
        assertEquals("FaultyV10 connect returned 2 (ncclSystemError); the plugin's log says why", connect.getMessage());
        first.close();
        second.close();
        assertEquals("", f.violations());
    }
}
