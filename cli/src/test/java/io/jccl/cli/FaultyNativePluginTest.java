package io.jccl.cli;

import io.jccl.nativenet.NativeHostConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code jccl plugins --plugin} and {@code jccl tck --native} on the deliberately faulty native
 * plugins of plugins/native (built into target/faulty-plugins): no crash, a clear state, and for
 * the kit one verdict, never a failed rule per rule. Each plugin records every call NCCL would not
 * make; there must be none.
 */
@SuppressWarnings("restricted")
class FaultyNativePluginTest {
    private static final Path DIR = Path.of("target/faulty-plugins").toAbsolutePath();

    private String netPluginBefore;

    @BeforeEach
    void rememberNcclNetPlugin() {
        netPluginBefore = System.getProperty(NativeHostConfig.NCCL_NET_PLUGIN);
    }

    /** jccl tck --native sets NCCL_NET_PLUGIN for its peer JVM; the other tests of this JVM must not see it. */
    @AfterEach
    void restoreNcclNetPlugin() {
        if (netPluginBefore == null) {
            System.clearProperty(NativeHostConfig.NCCL_NET_PLUGIN);
        } else {
            System.setProperty(NativeHostConfig.NCCL_NET_PLUGIN, netPluginBefore);
        }
    }

    private static String library(String name) {
        Path lib = DIR.resolve(name);
        assertTrue(Files.isRegularFile(lib), lib + " is built by this module's test-compile phase");
        return lib.toString();
    }

    private static String violations(String library) throws Throwable {
        SymbolLookup lookup = SymbolLookup.libraryLookup(Path.of(library), Arena.global());
        MemorySegment text = (MemorySegment) Linker.nativeLinker()
                .downcallHandle(lookup.find("faulty_violations").orElseThrow(), FunctionDescriptor.of(ADDRESS))
                .invokeExact();
        return text.reinterpret(4096).getString(0);
    }

    private static void assertOneVerdict(CliRun r, String precondition, String detail) {
        String out = r.output();
        assertEquals(TckCommand.EXIT_NOT_CHECKED, r.exitCode(), out);
        assertFalse(out.matches("(?s).*\n[a-z]+\\.[0-9]+ +(required|optional) +(FAIL|PASS|SKIP) .*"),
                "no rule may run: " + out);
        assertEquals(1, out.split("\\[" + precondition.replace(".", "\\.") + "]", -1).length - 1,
                "one verdict: " + out);
        assertTrue(out.contains("NOT CHECKED: no rule ran; [" + precondition + "] "), out);
        assertTrue(out.contains(detail), out);
        assertTrue(out.contains("required: 0 passed, 0 failed, 0 skipped"), out);
    }

    @Test
    void tckOnAPluginWhoseInitFailsIsOneVerdict(@TempDir Path dir) throws Throwable {
        String lib = library("libnccl-net-faulty-init.so");
        CliRun r = CliRun.of("tck", "--native", lib, "--report-dir", dir.toString());
        assertOneVerdict(r, "pre.1", "FaultyInit: init returned 2 (ncclSystemError)");
        assertTrue(Files.readString(dir.resolve("report.md")).contains("**NOT checked**"));
        assertEquals("", violations(lib));
    }

    @Test
    void tckOnAPluginWithoutDevicesIsOneVerdict(@TempDir Path dir) throws Throwable {
        String lib = library("libnccl-net-faulty-nodev.so");
        CliRun r = CliRun.of("tck", "--native", lib, "--report-dir", dir.toString());
        assertOneVerdict(r, "pre.2", "FaultyNoDevices: 0 devices after init");
        assertEquals("", violations(lib));
    }

    @Test
    void tckOnAPluginWhoseGetPropertiesFailsIsOneVerdict(@TempDir Path dir) throws Throwable {
        String lib = library("libnccl-net-faulty-props.so");
        CliRun r = CliRun.of("tck", "--native", lib, "--report-dir", dir.toString());
        assertOneVerdict(r, "pre.3", "FaultyProps: getProperties(0) threw ncclInternalError: FaultyProps "
                + "getProperties(0) returned 3 (ncclInternalError)");
        assertEquals("", violations(lib));
    }

    @Test
    void pluginsShowsEachFaultAsAStateAndStillSelectsAUsableTransport() throws Throwable {
        String init = library("libnccl-net-faulty-init.so");
        String nodev = library("libnccl-net-faulty-nodev.so");
        CliRun r = CliRun.of("plugins", "--plugin", init, "--plugin", nodev);
        String out = r.output();
        assertEquals(0, r.exitCode(), out);
        assertTrue(out.contains("transport:\tFaultyInit\n"), out);
        assertTrue(out.matches("(?s).*\tstate: +unavailable: ncclSystemError: FaultyInit: [^\n]*init returned 2 "
                + "\\(ncclSystemError\\).*"), out);
        assertTrue(out.contains("transport:\tFaultyNoDevices\n"), out);
        assertTrue(out.contains("\tstate:          no devices\n\tdevices:        0\n"), out);
        assertTrue(out.contains("selected:\tJcclSocket\t"), out);
        assertEquals("", violations(init));
        assertEquals("", violations(nodev));
    }

    /** Runs a command line as bin/jccl does: through the guard, in a child JVM. */
    private static CliRun guarded(String... args) throws Exception {
        List<String> libraries = NativeCrashGuard.nativeLibraries(args, Map.of());
        assertFalse(libraries.isEmpty(), "the guard watches " + String.join(" ", args));
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        int rc = NativeCrashGuard.run(args, libraries, new PrintStream(text, true));
        return new CliRun(rc, text.toString());
    }

    @Test
    void aPluginThatCrashesInInitTakesOnlyTheChildJvmDownAndIsNamed(@TempDir Path dir) throws Exception {
        String lib = library("libnccl-net-faulty-crash.so");
        CliRun tck = guarded("tck", "--native", lib, "--report-dir", dir.toString());
        assertEquals(NativeCrashGuard.EXIT_PLUGIN_CRASHED, tck.exitCode(), tck.output());
        assertTrue(tck.output().startsWith("CRASHED: the native plugin " + lib + " crashed the JVM that ran it: "
                + "SIGSEGV in libnccl-net-faulty-crash.so+0x"), tck.output());
        assertTrue(tck.output().contains(", in its init, during the kit's set-up (its preconditions). "), tck.output());

        CliRun plugins = guarded("plugins", "--plugin", lib);
        assertEquals(NativeCrashGuard.EXIT_PLUGIN_CRASHED, plugins.exitCode(), plugins.output());
        assertTrue(plugins.output().contains("SIGSEGV in libnccl-net-faulty-crash.so+0x")
                && plugins.output().contains(", in its init."), plugins.output());
    }

    @Test
    void aHealthyRunPassesTheChildsExitStatusThrough(@TempDir Path dir) throws Exception {
        CliRun r = guarded("tck", "--native", library("libnccl-net-faulty-props.so"), "--report-dir", dir.toString());
        assertEquals(TckCommand.EXIT_NOT_CHECKED, r.exitCode(), r.output());
        assertEquals("", r.output(), "the guard itself says nothing when the child did not crash");
    }

    @Test
    void onlyCommandsThatLoadNativePluginsAreGuarded() {
        assertEquals(List.of("/a/libx.so", "y"), NativeCrashGuard.nativeLibraries(
                new String[] {"plugins", "--plugin", "/a/libx.so", "--plugin=y"}, Map.of()));
        assertEquals(List.of("NCCL_NET_PLUGIN=aws-ofi"), NativeCrashGuard.nativeLibraries(
                new String[] {"plugins"}, Map.of("NCCL_NET_PLUGIN", "aws-ofi")));
        assertEquals(List.of(), NativeCrashGuard.nativeLibraries(new String[] {"plugins"}, Map.of("NCCL_NET_PLUGIN", "none")));
        assertEquals(List.of(), NativeCrashGuard.nativeLibraries(new String[] {"tck", "--net", "JcclSocket"}, Map.of()));
        assertEquals(List.of(), NativeCrashGuard.nativeLibraries(new String[] {"perf", "all_reduce"}, Map.of()));
    }
}
