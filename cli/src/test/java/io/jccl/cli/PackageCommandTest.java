package io.jccl.cli;

import io.jccl.net.socket.SocketNetPlugin;
import io.jccl.nativenet.NativePluginSource;
import io.jccl.spi.NetPlugin;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code jccl package} on JcclSocket's jar from the build: the directory it writes loads back
 * through the native host (in a child JVM whose class path has neither the shim's Java half nor
 * JcclSocket, so that both come from the package), and bad arguments are one line and exit 2.
 */
class PackageCommandTest {
    private static final Pattern DEVICES = Pattern.compile("(?m)^devices:\\t(\\d+)$");

    private static Path socketJar() {
        return PackageCommand.jarOf(SocketNetPlugin.class);
    }

    /** The package needs the shim library (built with gcc into the jccl-shim jar) and the native host's. */
    private static void assumeNativeLibrariesBuilt() {
        Assumptions.assumeTrue(PackageCommand.shimClass().getResource(PackageCommand.shimResource()) != null,
                "the shim library " + PackageCommand.shimResource() + " is not built into the jccl-shim jar");
        String host = "/META-INF/native/linux-" + System.getProperty("os.arch") + "/libjccl-nativehost.so";
        Assumptions.assumeTrue(NativePluginSource.class.getResource(host) != null
                        || Files.isRegularFile(PackageCommand.jarOf(NativePluginSource.class)
                        .resolveSibling("libjccl-nativehost.so")),
                "the native host's library libjccl-nativehost.so is not built");
    }

    @Test
    void packagesJcclSocketAsLibncclNetNameAndLoadsItBackThroughTheNativeHost(@TempDir Path tmp) throws Exception {
        assumeNativeLibrariesBuilt();
        Path out = tmp.resolve("pkg");
        CliRun run = CliRun.of("package", "--jar", socketJar().toString(), "--name", "pkgtest", "--out", out.toString());
        assertEquals(0, run.exitCode(), run.output());
        Path so = out.resolve("libnccl-net-pkgtest.so");
        assertTrue(Files.isRegularFile(so) && Files.isExecutable(so), run.output());
        assertTrue(Files.isRegularFile(out.resolve(socketJar().getFileName())), run.output());
        assertTrue(Files.isRegularFile(out.resolve(PackageCommand.jarOf(NetPlugin.class).getFileName())), run.output());
        assertTrue(Files.isRegularFile(out.resolve(PackageCommand.jarOf(PackageCommand.shimClass()).getFileName())),
                run.output());
        assertTrue(Files.readAllLines(out.resolve("libnccl-net-pkgtest.properties")).contains("JCCL_SHIM_NET=JcclSocket"),
                run.output());
        assertTrue(run.output().contains("transport:\tJcclSocket (ncclNet v12, native plugin)\n"), run.output());
        Matcher devices = DEVICES.matcher(run.output());
        assertTrue(devices.find() && Integer.parseInt(devices.group(1)) >= 1, run.output());
        assertTrue(run.output().contains("dev 0:\t\t"), run.output());
        assertTrue(run.output().contains("OK: " + so + " loads as NCCL net plugin JcclSocket"), run.output());
        assertFalse(Files.exists(out.resolve("runtime")), "no runtime without --jlink");
        // The AOT cache's trainer travels with the package; without --aot nothing is trained.
        assertTrue(Files.isExecutable(out.resolve(PackageCommand.TRAINER)), run.output());
        assertFalse(Files.exists(out.resolve("jccl-shim.aot")), run.output());
    }

    @Test
    void withJlinkThePackageCarriesARuntimeWithJdkNetAndTheCheckRunsOnIt(@TempDir Path tmp) throws Exception {
        assumeNativeLibrariesBuilt();
        Path out = tmp.resolve("pkg");
        CliRun run = CliRun.of("package", "--jar", socketJar().toString(), "--name", "pkgjre", "--out", out.toString(),
                "--net", "jcclsocket", "--jlink", "--aot");
        assertEquals(0, run.exitCode(), run.output());
        Path runtime = out.resolve("runtime");
        String release = Files.readString(runtime.resolve("release"));
        assertTrue(release.contains("java.base") && release.contains("jdk.net"), release);
        assertFalse(release.contains("java.desktop"), "only the modules needed: " + release);
        assertTrue(Files.isRegularFile(runtime.resolve("lib/server/libjvm.so")), release);
        assertTrue(run.output().contains("through the native host (" + runtime.resolve("bin/java") + ")"), run.output());
        Matcher devices = DEVICES.matcher(run.output());
        assertTrue(devices.find() && Integer.parseInt(devices.group(1)) >= 1, run.output());
        assertTrue(run.output().contains("OK: " + out.resolve("libnccl-net-pkgjre.so")), run.output());
        // --aot: the package's own trainer wrote the shim's AOT cache with the package's runtime.
        assertTrue(run.output().contains("aot:\t\tINFO NET/JCCL: AOT cache written: " + out.resolve("jccl-shim.aot")),
                run.output());
        assertTrue(Files.size(out.resolve("jccl-shim.aot")) > 0 && Files.isRegularFile(out.resolve("jccl-shim.aot.classpath")),
                run.output());
        assertTrue(release.contains("jdk.management"), "--aot links the modules the training needs: " + release);
    }

    @Test
    void everyBadArgumentIsOneLineNamingItAndExitStatus2(@TempDir Path tmp) throws IOException {
        String jar = socketJar().toString();
        Path out = tmp.resolve("pkg");
        Path notAJar = Files.writeString(tmp.resolve("notes.jar"), "not a zip");
        Path full = Files.createDirectories(tmp.resolve("full"));
        Files.writeString(full.resolve("something"), "x");
        String spiJar = PackageCommand.jarOf(NetPlugin.class).toString();
        List<List<String>> cases = List.of(
                List.of("--name", "x", "--out", out.toString()),
                List.of("--jar", "/nonexistent/vendor.jar", "--name", "x", "--out", out.toString()),
                List.of("--jar", notAJar.toString(), "--name", "x", "--out", out.toString()),
                List.of("--jar", jar, "--out", out.toString()),
                List.of("--jar", jar, "--name", "bad/name", "--out", out.toString()),
                List.of("--jar", jar, "--name", "x"),
                List.of("--jar", jar, "--name", "x", "--out", full.toString()),
                List.of("--jar", jar, "--name", "x", "--out", out.toString(), "--net", "NoSuchNet"),
                List.of("--jar", spiJar, "--name", "x", "--out", out.toString()));
        List<String> named = List.of("--jar is missing", "/nonexistent/vendor.jar", notAJar + ": not a jar file",
                "--name is missing", "--name bad/name", "--out is missing", "--out " + full,
                "--net NoSuchNet: the jars provide JcclSocket", "no provider of io.jccl.spi.NetPlugin");
        for (int i = 0; i < cases.size(); i++) {
            String[] args = new String[cases.get(i).size() + 1];
            args[0] = "package";
            for (int a = 0; a < cases.get(i).size(); a++) {
                args[a + 1] = cases.get(i).get(a);
            }
            CliRun run = CliRun.of(args);
            String what = String.join(" ", args) + " -> " + run.output();
            assertEquals(2, run.exitCode(), what);
            assertEquals(1, run.output().lines().count(), what);
            assertTrue(run.output().startsWith("jccl package: ") && run.output().contains(named.get(i)), what);
            assertFalse(Files.exists(out), "nothing written for a bad argument: " + what);
        }
    }
}
