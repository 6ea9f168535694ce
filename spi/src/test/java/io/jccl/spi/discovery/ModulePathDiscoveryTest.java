package io.jccl.spi.discovery;

import io.jccl.spi.NetPlugin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.spi.ToolProvider;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transport shipped as a named module ({@code provides io.jccl.spi.NetPlugin with ...}) is found
 * when everything runs on the module path. The provider module is compiled here, from source, and
 * run in a child JVM whose module path holds only {@code io.jccl.spi} and that module.
 */
class ModulePathDiscoveryTest {

    private static final String MODULE_INFO = """
            module vendor.transport {
                requires io.jccl.spi;
                provides io.jccl.spi.NetPlugin with vendor.transport.VendorNet;
            }
            """;

    private static final String MAIN = """
            package vendor.transport;

            import io.jccl.spi.NetLogger;
            import io.jccl.spi.discovery.NetPluginDiscovery;

            public final class Main {
                public static void main(String[] args) throws Exception {
                    NetPluginDiscovery d = NetPluginDiscovery.load();
                    var s = d.selectNet("vendornet", NetLogger.noop());
                    System.out.println("selected " + s.plugin().name() + " with " + s.devices() + " device(s)"
                            + " from module " + s.plugin().getClass().getModule().getName()
                            + "; spi module " + NetLogger.class.getModule().getName());
                }
            }
            """;

    private static final String PLUGIN = """
            package vendor.transport;

            import io.jccl.spi.*;
            import java.lang.foreign.MemorySegment;

            public final class VendorNet implements NetPlugin {
                public String name() { return "VendorNet"; }
                public void init(NetLogger logger) { }
                public int devices() { return 1; }
                public NetProperties getProperties(int dev) { return NetProperties.builder("vendor0").build(); }
                private static NetException none() { return NetException.internalError("module-path fixture"); }
                public ListenComm listen(int dev, NetHandle h) throws NetException { throw none(); }
                public SendComm connect(int dev, NetHandle h) throws NetException { throw none(); }
                public RecvComm accept(ListenComm l) throws NetException { throw none(); }
                public MemoryHandle regMr(NetComm c, MemorySegment d, PointerType t) throws NetException { throw none(); }
                public void deregMr(NetComm c, MemoryHandle m) throws NetException { throw none(); }
                public NetRequest isend(SendComm c, MemorySegment d, int tag, MemoryHandle m) throws NetException {
                    throw none();
                }
                public NetRequest irecv(RecvComm c, int n, MemorySegment[] d, int[] t, MemoryHandle[] m)
                        throws NetException { throw none(); }
                public NetRequest iflush(RecvComm c, int n, MemorySegment[] d, MemoryHandle[] m) throws NetException {
                    throw none();
                }
                public boolean test(NetRequest r, int[] s) throws NetException { throw none(); }
                public void closeSend(SendComm c) throws NetException { throw none(); }
                public void closeRecv(RecvComm c) throws NetException { throw none(); }
                public void closeListen(ListenComm c) throws NetException { throw none(); }
            }
            """;

    @Test
    void namedModuleProviderIsFoundOnTheModulePath(@TempDir Path tmp) throws IOException, InterruptedException {
        Path spiClasses = Path.of(NetPlugin.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        assertTrue(Files.exists(spiClasses.resolve("module-info.class")) || spiClasses.toString().endsWith(".jar"),
                "io.jccl.spi must be a named module: " + spiClasses);

        Path src = tmp.resolve("src");
        Path out = tmp.resolve("vendor.transport");
        write(src.resolve("module-info.java"), MODULE_INFO);
        write(src.resolve("vendor/transport/Main.java"), MAIN);
        write(src.resolve("vendor/transport/VendorNet.java"), PLUGIN);

        ToolProvider javac = ToolProvider.findFirst("javac").orElse(null);
        assertNotNull(javac, "tests must run on a JDK");
        int rc = javac.run(System.out, System.err, "-d", out.toString(), "--module-path", spiClasses.toString(),
                src.resolve("module-info.java").toString(), src.resolve("vendor/transport/Main.java").toString(),
                src.resolve("vendor/transport/VendorNet.java").toString());
        assertEquals(0, rc, "compiling the provider module");

        Path javaLauncher = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(List.of(javaLauncher.toString(),
                "--module-path", spiClasses + File.pathSeparator + out,
                "-m", "vendor.transport/vendor.transport.Main"))
                .redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM did not finish");
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, p.exitValue(), output);
        assertEquals("selected VendorNet with 1 device(s) from module vendor.transport; spi module io.jccl.spi", output);
    }

    private static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text);
    }
}
