package io.jccl.shim;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The shim as NCCL meets it: a C program with no JVM ({@code jccl-shim-driver}, a stand-in for
 * NCCL) dlopens {@code libnccl-net.so}, takes the newest {@code ncclNetPlugin_vN} and calls it. The
 * shim must start a JVM itself, run JcclSocket, and fail cleanly, with one WARN line naming the
 * variable to set, when it cannot.
 *
 * <p>If this fails, the driver's output is in the assertion message; run the driver by hand with the
 * same variables ({@code target/native/jccl-shim-driver target/native/libnccl-net.so exchange}).
 */
class ShimProcessTest {
    private static final String JAVA_HOME = System.getProperty("java.home");

    private record Run(int exitCode, String output) {
        List<String> warnings() {
            List<String> w = new ArrayList<>();
            for (String line : output.split("\n")) {
                if (line.startsWith("LOG 2 ")) {
                    w.add(line.substring(6));
                }
            }
            return w;
        }
    }

    private static Run driver(Map<String, String> variables, String... args) throws IOException, InterruptedException {
        return driver(ShimLibrary.library(), variables, args);
    }

    private static Run driver(Path library, Map<String, String> variables, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(ShimLibrary.driver().toString());
        command.add(library.toString());
        command.addAll(List.of(args));
        return process(command, variables);
    }

    /** Runs command with the shim's variables cleared, then the defaults of these tests and variables set. */
    private static Run process(List<String> command, Map<String, String> variables)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(k -> k.startsWith("JCCL_") || k.startsWith("NCCL_") || k.equals("JAVA_HOME")
                || k.equals("LD_LIBRARY_PATH"));
        Map<String, String> defaults = new HashMap<>();
        defaults.put("JCCL_JAVA_HOME", JAVA_HOME);
        defaults.put("JCCL_SHIM_CLASSPATH", ShimLibrary.classPath());
        defaults.putAll(variables);
        defaults.forEach((k, v) -> {
            if (v != null) {
                env.put(k, v);
            }
        });
        Process p = pb.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("the driver did not finish within 120 s: " + new String(p.getInputStream().readAllBytes(),
                    StandardCharsets.UTF_8));
        }
        return new Run(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    @ParameterizedTest(name = "newest exported: v{0}")
    @ValueSource(ints = {6, 11, 12})
    void startsAJvmAndMovesDataForACProgram(int maxVersion) throws Exception {
        Run run = driver(Map.of(ShimConfig.JCCL_SHIM_MAX_API_VERSION, Integer.toString(maxVersion)), "exchange");
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().startsWith("version " + maxVersion + " name JcclSocket"), run.output());
        assertTrue(run.output().contains("transfers ok") && run.output().endsWith("OK\n"), run.output());
    }

    @ParameterizedTest(name = "v{0}")
    @ValueSource(ints = {11, 12})
    void aCollNetWithoutDevicesLeavesNoContextForNcclToFinalizeAtDestroy(int maxVersion) throws Exception {
        // NCCL 2.28's ncclNetFinalize finalizes any non-NULL collNetContext through comm->ncclCollNet,
        // which stays NULL when the CollNet reported 0 devices: the SIGSEGV at 0x90 that nccl-tests met
        // in ncclCommDestroy at v11. The driver replays that life cycle for two communicators.
        Run run = driver(Map.of(ShimConfig.JCCL_SHIM_MAX_API_VERSION, Integer.toString(maxVersion)), "exchange");
        assertEquals(0, run.exitCode(), run.output());
        assertEquals(2, run.output().split("collnet disabled, context NULL", -1).length - 1, run.output());
        assertTrue(run.output().endsWith("OK\n"), run.output());
    }

    @ParameterizedTest(name = "newest exported: v{0}")
    @ValueSource(ints = {6, 12})
    void communicatorsDestroyedAndCreatedAgainLeaveNoSocketOrThreadBehind(int maxVersion) throws Exception {
        // NCCL's life cycle, communicator after communicator, with I/O threads per connection: a comm,
        // registration, liveness socket or thread that a destroy leaves behind would grow the
        // process's fds (4 sockets a connection) and threads (2 a connection) with every cycle.
        Run run = driver(Map.of(ShimConfig.JCCL_SHIM_MAX_API_VERSION, Integer.toString(maxVersion),
                "NCCL_SOCKET_NTHREADS", "2", "NCCL_NSOCKS_PERTHREAD", "1"), "cycles", "8");
        assertEquals(0, run.exitCode(), run.output());
        Matcher m = Pattern.compile("cycle (\\d+) fds (\\d+) threads (\\d+)")
                .matcher(run.output());
        List<int[]> cycles = new ArrayList<>();
        while (m.find()) {
            cycles.add(new int[] {Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))});
        }
        assertEquals(8, cycles.size(), run.output());
        int[] second = cycles.get(1);
        int[] last = cycles.get(7);
        // A closing socket may still be open for a moment at a count (CI saw 13 fds at cycle 2, 12 at
        // cycle 8); a leaked connection adds 4 a cycle, 24 over these six.
        assertTrue(last[0] - second[0] < 4, "open fds after cycle 2 and after cycle 8: " + run.output());
        // The JVM's own threads come and go by one or two; a leaked connection adds 2 a cycle.
        assertTrue(last[1] - second[1] < 4, "threads after cycle 2 and after cycle 8: " + run.output());
    }

    @Test
    void theDataPathCompiledByC2TrapsOnNoArrayStoreCheck(@TempDir Path dir) throws Exception {
        // C2 compiles an aastore into an interface-typed array (MemorySegment[], NetRequest[]) with
        // a guess that always fails: each such store on the data path cost a trap and a
        // recompilation, one after another, and under NCCL they took all of nccl-tests' 20 000
        // warm-up iterations to settle. If this fails, a store into such an array was added to
        // isend, irecv, test or what they inline: go through io.jccl.spi.SpiArrays (see its javadoc).
        Path deopt = dir.resolve("deopt.log");
        Path jit = dir.resolve("jit.log");
        // Without the warm-up: its comms come and go, and this run's comm alone should show the
        // data path's traps (the warm-up's own test checks that it leaves none for NCCL's comms).
        Run run = driver(Map.of("JCCL_SHIM_JVM_OPTS", "-Xlog:deoptimization=debug:file=" + deopt
                + " -Xlog:jit+compilation=debug:file=" + jit, ShimWarmup.JCCL_SHIM_WARMUP, "0"), "bench", "300000");
        assertEquals(0, run.exitCode(), run.output());
        List<String> compiled = Files.readAllLines(jit);
        Assumptions.assumeTrue(compiled.stream().anyMatch(l -> l.matches(".*\\s4\\s+io\\.jccl\\.shim\\.NetBridge::irecv .*")),
                "C2 did not compile NetBridge.irecv within the run (a slow machine): nothing to check");
        List<String> traps = Files.readAllLines(deopt).stream()
                .filter(l -> l.contains("io.jccl") && l.contains("array_check"))
                .toList();
        assertTrue(traps.isEmpty(), "array-store traps on the data path:\n" + String.join("\n", traps));
    }

    @Test
    void aSmallSendDoneAtIsendIsAnsweredInCWithoutAnUpcall() throws Exception {
        // The driver's bench posts a receive, then an 8-byte send, and tests both until done.
        // JcclSocket writes 8 bytes at once, so isend hands back a DONE_SEND handle and shim_net.c's
        // test() answers it itself: the profile counts test upcalls only, so there is one completing
        // test per receive and none per send. Twice as many, and the early test in NetBridge.isend (or
        // the C check of JCCL_DONE_SEND_PREFIX) no longer works.
        Run run = driver(Map.of("JCCL_SHIM_PROFILE", "1"), "bench", "20000");
        assertEquals(0, run.exitCode(), run.output());
        Matcher m = Pattern
                .compile("isend (\\d+) calls .* test done (\\d+) calls").matcher(run.output());
        assertTrue(m.find(), "no JCCL_SHIM_PROFILE line: " + run.output());
        long isends = Long.parseLong(m.group(1));
        long testsDone = Long.parseLong(m.group(2));
        assertTrue(isends > 1000, run.output());
        assertTrue(testsDone < isends * 3 / 2, "completing test upcalls " + testsDone + " for " + isends
                + " sends and as many receives: sends went through Java's test\n" + run.output());
    }

    @Test
    void theWarmUpRunsItsRoundsBeforeNcclsFirstMessageAndLeavesNothingOpen() throws Exception {
        // The driver sleeps 3 s after init, as NCCL sets its communicator up, then sends. The warm-up
        // runs its rounds through the upcall stubs meanwhile (on a slow machine NCCL's first message
        // may cut it short) and closes its comms: NCCL's last finalize finds none open, and nothing
        // warned. What it does for the JIT is measured, not tested (MEASUREMENTS.md, "Cold start"):
        // with a busy compile queue C2 needs more rounds.
        Run run = driver(Map.of("NCCL_DEBUG", "INFO", ShimWarmup.JCCL_SHIM_WARMUP, "20000"), "warmup", "100", "3000");
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("warm-up: 20000 loopback rounds start"), run.output());
        assertTrue(run.output().contains("warm-up: 20000 of 20000 loopback rounds in")
                || run.output().contains("stopped at NCCL's first message"), run.output());
        assertTrue(run.output().contains("no comm or registration left open"), run.output());
        assertTrue(run.warnings().isEmpty(), run.output());
    }

    @Test
    void ncclsFirstMessageEndsTheWarmUpAndNothingIsLeftOpen() throws Exception {
        // A warm-up still running (a very long one here) when NCCL sends: it ends after its current
        // round, so that it never competes with NCCL's traffic, and closes its comms; NCCL's leak
        // check at its last finalize finds none.
        Run run = driver(Map.of("NCCL_DEBUG", "INFO", ShimWarmup.JCCL_SHIM_WARMUP, "100000000"), "exchange");
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("of 100000000 loopback rounds")
                && run.output().contains("stopped at NCCL's first message"), run.output());
        assertTrue(run.output().contains("no comm or registration left open"), run.output());
        assertTrue(run.warnings().stream().allMatch(w -> w.contains("0x1234")), "only the driver's garbage-handle "
                + "check may warn: " + run.output());
    }

    @Test
    void underNcclBefore228TheWarmUpNeverReleasesTheTransport() throws Exception {
        // ncclNet v6: no contexts and no finalize. A warm-up that opened and finalized a context of its
        // own was taken for NCCL's last communicator: the transport was released (or NCCL's comms
        // reported leaked) while NCCL still used it. Here the warm-up ends during the driver's set-up.
        Run run = driver(Map.of("NCCL_DEBUG", "INFO", ShimWarmup.JCCL_SHIM_WARMUP, "200",
                ShimConfig.JCCL_SHIM_MAX_API_VERSION, "6"), "warmup", "100", "1500");
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("warm-up: 200 of 200 loopback rounds"), run.output());
        assertFalse(run.output().contains("last communicator finalized"), run.output());
        assertTrue(run.warnings().isEmpty(), run.output());
    }

    @Test
    void aBadWarmUpCountFailsInitWithOneWarningNamingIt() throws Exception {
        Run run = driver(Map.of(ShimWarmup.JCCL_SHIM_WARMUP, "many"), "init");
        assertTrue(run.output().contains("init 5\n"), "ncclInvalidUsage expected: " + run.output());
        assertEquals(1, run.warnings().size(), run.output());
        assertTrue(run.warnings().get(0).contains("JCCL_SHIM_WARMUP=many"), run.output());
        Run off = driver(Map.of("NCCL_DEBUG", "INFO", ShimWarmup.JCCL_SHIM_WARMUP, "0"), "exchange");
        assertEquals(0, off.exitCode(), off.output());
        assertFalse(off.output().contains("warm-up"), off.output());
    }

    @Test
    void aFrozenPeerFailsNcclsPendingReceiveWithRemoteErrorWithinTheBound() throws Exception {
        // What NCCL's proxy meets when a peer process is stopped (SIGSTOP): its kernel still
        // acknowledges TCP, so only the transport's liveness bound can end the receive. An idle but
        // live peer (3 s, longer than the bound) must not be declared dead.
        Run run = driver(Map.of("JCCL_SOCKET_TIMEOUT_MS", "2000"), "frozen-peer", "3000");
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("idle peer: the receive stayed pending for 3000 ms"), run.output());
        Matcher m = Pattern.compile("receive failed with (\\d+) after (\\d+) ms")
                .matcher(run.output());
        assertTrue(m.find(), run.output());
        assertEquals(6, Integer.parseInt(m.group(1)), "ncclRemoteError expected: " + run.output());
        assertTrue(Integer.parseInt(m.group(2)) <= 2000 + 2000, "within the bound plus a heartbeat: " + run.output());
        // The send caught mid-transfer fails too, and what ncclCommAbort then calls (deregister,
        // close each comm, finalize) returns at once with the peer still frozen: the driver fails
        // any of them that takes over 2 s.
        assertTrue(run.output().contains("frozen peer: send failed with 6"), run.output());
        assertEquals(6, run.output().split("\nabort: ", -1).length - 1, run.output());
    }

    @Test
    void survivesNcclUnloadingItAndReopeningTheDefaultName() throws Exception {
        // NCCL 2.28 and 2.29 dlclose the plugin after the last communicator, forget NCCL_NET_PLUGIN's
        // path and dlopen "libnccl-net.so" for the next one: nodelete keeps the JVM's library mapped,
        // and its soname lets that reopen find it though no directory on the library path holds it.
        Run run = driver(Map.of(), "reload");
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("reopened the same library as libnccl-net.so"), run.output());
        assertEquals(2, run.output().split("transfers ok", -1).length - 1, run.output());
    }

    @Test
    void withoutAJdkInitFailsWithOneWarningThatNamesTheVariable() throws Exception {
        Map<String, String> none = new HashMap<>();
        none.put("JCCL_JAVA_HOME", null);
        Run run = driver(none, "init");
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("init 2\n"), "ncclSystemError expected: " + run.output());
        assertEquals(1, run.warnings().size(), run.output());
        String warning = run.warnings().get(0);
        assertTrue(warning.contains("set JCCL_JAVA_HOME to a JDK 22 or newer"), warning);
        assertTrue(warning.contains("JAVA_HOME unset"), warning);
    }

    @Test
    void aJavaHomeTooOldForFfmIsNamed() throws Exception {
        Path old = Path.of("/usr/lib/jvm/java-17-openjdk-amd64");
        Map<String, String> vars = new HashMap<>();
        vars.put("JCCL_JAVA_HOME", "/nonexistent/jdk");
        Run wrongHome = driver(vars, "init");
        assertTrue(wrongHome.output().contains("init 2\n"), wrongHome.output());
        assertTrue(wrongHome.warnings().get(0).contains("JCCL_JAVA_HOME=/nonexistent/jdk"), wrongHome.output());
        if (old.resolve("release").toFile().isFile()) {
            vars.put("JCCL_JAVA_HOME", null);
            vars.put("JAVA_HOME", old.toString());
            Run tooOld = driver(vars, "init");
            assertTrue(tooOld.warnings().get(0).contains("JAVA_HOME=" + old + " is JDK 17"), tooOld.output());
        }
    }

    @Test
    void aRuntimeWithoutAModuleTheTransportNeedsFailsInitWithOneWarningNamingIt() throws Exception {
        Path runtime = javaBaseRuntime();
        // JcclSocket needs java.base alone (jdk.net is optional): it runs on the minimal runtime.
        Run socket = driver(Map.of("JCCL_JAVA_HOME", runtime.toString()), "exchange");
        assertEquals(0, socket.exitCode(), socket.output());
        assertTrue(socket.output().contains("transfers ok") && socket.output().endsWith("OK\n"), socket.output());
        // JcclIB needs jdk.net.
        Run ib = driver(Map.of("JCCL_JAVA_HOME", runtime.toString(), ShimConfig.JCCL_SHIM_NET, "JcclIB",
                "JCCL_SHIM_CLASSPATH", ShimLibrary.classPath() + File.pathSeparator
                        + ShimLibrary.classPath(io.jccl.net.ib.IbNetPlugin.class)), "init");
        assertTrue(ib.output().contains("init 2\n"), "ncclSystemError expected: " + ib.output());
        assertEquals(1, ib.warnings().size(), ib.output());
        String warning = ib.warnings().get(0);
        assertTrue(warning.contains("lacks module jdk.net, which JcclIB") && warning.contains(runtime.toString())
                && warning.contains("jlink --add-modules java.base,jdk.net"), warning);
    }

    /** @return a runtime with java.base only, linked once into target/ from the JDK running the tests */
    private static synchronized Path javaBaseRuntime() throws IOException, InterruptedException {
        Path runtime = Path.of("target", "jre-java.base").toAbsolutePath();
        if (Files.isRegularFile(runtime.resolve("release"))) {
            return runtime;
        }
        Path jlink = Path.of(JAVA_HOME, "bin", "jlink");
        Assumptions.assumeTrue(Files.isExecutable(jlink), "no jlink in " + JAVA_HOME);
        Process p = new ProcessBuilder(jlink.toString(), "--add-modules", "java.base", "--output", runtime.toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), "jlink failed: " + out);
        return runtime;
    }

    @Test
    void anUnknownTransportNameFailsInitWithTheNamesAvailable() throws Exception {
        Run run = driver(Map.of(ShimConfig.JCCL_SHIM_NET, "NoSuchTransport"), "init");
        assertTrue(run.output().startsWith("version 12 name NoSuchTransport"), run.output());
        assertTrue(run.output().contains("init 5\n"), "ncclInvalidUsage expected: " + run.output());
        String all = String.join("\n", run.warnings());
        assertTrue(all.contains("no Java transport named NoSuchTransport") && all.contains("JcclSocket")
                && all.contains("JCCL_SHIM_NET"), run.output());
    }

    @Test
    void aClassPathWithoutJcclNamesTheVariable() throws Exception {
        Run run = driver(Map.of("JCCL_SHIM_CLASSPATH", "/nonexistent.jar"), "init");
        assertTrue(run.output().contains("init 2\n"), run.output());
        assertEquals(1, run.warnings().size(), run.output());
        assertTrue(run.warnings().get(0).contains("JCCL_SHIM_CLASSPATH"), run.output());
    }

    @Test
    void aBadJvmOptionFailsInitAndNamesTheVariable() throws Exception {
        Run run = driver(Map.of(ShimConfig.JCCL_SHIM_JVM_OPTS, "-Xno-such-option"), "init");
        assertTrue(run.output().contains("init 2\n"), run.output());
        assertTrue(run.warnings().get(0).contains("JCCL_SHIM_JVM_OPTS=-Xno-such-option"), run.output());
        Run good = driver(Map.of(ShimConfig.JCCL_SHIM_JVM_OPTS, "-Xmx128m -XX:+UseSerialGC"), "init");
        assertTrue(good.output().contains("init 0\n"), good.output());
    }

    @Test
    void theGuestJvmKeepsAFixedSetOfThreadsUnlessTheUserNamesACollector() throws Exception {
        // Under PyTorch on 16 cores, G1 started GC threads one by one as communicators came and went
        // (12 more by the fourth), which a leak check cannot tell from a leak. The shim's JVM uses the
        // serial collector (no GC threads) and two compiler threads, as many as cores would suggest.
        Map<String, String> manyCores = Map.of(ShimConfig.JCCL_SHIM_JVM_OPTS, "-XX:ActiveProcessorCount=16");
        Run guest = driver(manyCores, "init");
        assertTrue(guest.output().contains("init 0\n"), guest.output());
        String threads = guest.output().lines().filter(l -> l.startsWith("threads:")).findFirst().orElseThrow();
        assertFalse(threads.contains("[G1 ") || threads.contains("[GC Thread"), threads);
        assertEquals(1, threads.split("\\[C1 CompilerThre", -1).length - 1, threads);
        assertEquals(1, threads.split("\\[C2 CompilerThre", -1).length - 1, threads);
        Run g1 = driver(Map.of(ShimConfig.JCCL_SHIM_JVM_OPTS, "-XX:ActiveProcessorCount=16 -XX:+UseG1GC"), "init");
        assertTrue(g1.output().contains("init 0\n"), g1.output());
        assertTrue(g1.output().contains("[G1 "), "the user's collector replaces the default: " + g1.output());
    }

    @Test
    void ncclNetNamingNcclsOwnTransportLeavesTheShimItsDefaultName() throws Exception {
        Run socket = driver(Map.of("NCCL_NET", "Socket"), "init");
        assertTrue(socket.output().startsWith("version 12 name JcclSocket"), socket.output());
        Run named = driver(Map.of("NCCL_NET", "JcclSocket"), "init");
        assertTrue(named.output().startsWith("version 12 name JcclSocket") && named.output().contains("init 0\n"),
                named.output());
    }

    /** A copy of the library as {@code jccl package} lays it out: libnccl-net-pkg.so in its own directory. */
    private static Path packagedCopy(Path dir) throws IOException {
        Path library = dir.resolve("libnccl-net-pkg.so");
        Files.copy(ShimLibrary.library(), library);
        return library;
    }

    @Test
    void thePackageFileBesideTheLibraryNamesTheTransportAndTheEnvironmentWins(@TempDir Path dir) throws Exception {
        Path library = packagedCopy(dir);
        Files.writeString(dir.resolve("libnccl-net-pkg.properties"),
                "# written by jccl package\nJCCL_SHIM_NETWORK=Other\n  JCCL_SHIM_NET = NoSuchPackagedNet \n");
        Run packaged = driver(library, Map.of(), "init");
        assertTrue(packaged.output().startsWith("version 12 name NoSuchPackagedNet\n"), packaged.output());
        assertTrue(packaged.output().contains("init 5\n") && String.join("\n", packaged.warnings())
                .contains("no Java transport named NoSuchPackagedNet"), packaged.output());
        // NCCL_NET naming NCCL's own transport leaves the package's choice in place.
        Run ncclSocket = driver(library, Map.of("NCCL_NET", "Socket"), "init");
        assertTrue(ncclSocket.output().startsWith("version 12 name NoSuchPackagedNet\n"), ncclSocket.output());
        Run env = driver(library, Map.of(ShimConfig.JCCL_SHIM_NET, "JcclSocket"), "init");
        assertTrue(env.output().startsWith("version 12 name JcclSocket\n") && env.output().contains("init 0\n"),
                env.output());
        Run ncclNet = driver(library, Map.of("NCCL_NET", "JcclSocket"), "init");
        assertTrue(ncclNet.output().startsWith("version 12 name JcclSocket\n"), ncclNet.output());
    }

    @Test
    void aRuntimeBesideTheLibraryRunsTheJvmWhenNoJavaHomeIsSet(@TempDir Path dir) throws Exception {
        Path library = packagedCopy(dir);
        Files.createSymbolicLink(dir.resolve("runtime"), javaBaseRuntime());
        Map<String, String> noHome = new HashMap<>();
        noHome.put("JCCL_JAVA_HOME", null);
        Run run = driver(library, noHome, "exchange");
        assertEquals(0, run.exitCode(), run.output());
        assertTrue(run.output().contains("started " + dir.toRealPath().resolve("runtime/lib/server/libjvm.so")),
                run.output());
        assertTrue(run.output().contains("transfers ok") && run.output().endsWith("OK\n"), run.output());
        // JCCL_JAVA_HOME still comes first.
        Run home = driver(library, Map.of(), "init");
        assertTrue(home.output().contains("started " + JAVA_HOME), home.output());
    }

    // ---- the JVM's AOT cache (JCCL_SHIM_AOT_CACHE, JCCL_SHIM_AOT_TRAIN) ----------------------------

    private static void assumeAotCache() {
        Assumptions.assumeTrue(Runtime.version().feature() >= 25, "the AOT cache needs JDK 25+, the tests run on "
                + Runtime.version());
    }

    /** The shim's class path as jars: an AOT cache takes classes from jars only, not directories. */
    private static String classPathOfJars(Path dir) throws IOException {
        List<String> jars = new ArrayList<>();
        for (String entry : ShimLibrary.classPath().split(File.pathSeparator)) {
            Path p = Path.of(entry);
            if (!Files.isDirectory(p)) {
                // A copy: the test changes a jar.
                Path copy = dir.resolve(p.getFileName());
                Files.copy(p, copy);
                jars.add(copy.toString());
                continue;
            }
            Path jar = dir.resolve(p.getParent().getParent().getFileName() + "-classes.jar");
            try (var out = new java.util.jar.JarOutputStream(Files.newOutputStream(jar));
                 var files = Files.walk(p)) {
                for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
                    out.putNextEntry(new java.util.jar.JarEntry(p.relativize(f).toString().replace(File.separatorChar, '/')));
                    Files.copy(f, out);
                    out.closeEntry();
                }
            }
            jars.add(jar.toString());
        }
        return String.join(File.pathSeparator, jars);
    }

    @Test
    void aTrainingRunWritesAnAotCacheThatTheNextJvmStartsWith(@TempDir Path dir) throws Exception {
        assumeAotCache();
        String classPath = classPathOfJars(dir);
        Path cache = dir.resolve("shim.aot");
        Run train = driver(Map.of("JCCL_SHIM_CLASSPATH", classPath, ShimConfig.JCCL_SHIM_AOT_TRAIN, "1",
                ShimConfig.JCCL_SHIM_AOT_CACHE, cache.toString(), "NCCL_DEBUG", "INFO"), "warmup", "2000", "300");
        assertEquals(0, train.exitCode(), train.output());
        assertTrue(train.output().contains("training AOT cache " + cache), train.output());
        // Written at the finalize of the last communicator, the driver's exit being no JVM exit.
        assertTrue(train.output().contains("NET/JCCL: AOT cache written: " + cache), train.output());
        assertTrue(Files.size(cache) > 0, train.output());
        assertEquals(List.of(), train.warnings(), train.output());

        // -XX:AOTMode=on: the JVM refuses to start unless it can map the cache (same JDK, same jars).
        Run use = driver(Map.of("JCCL_SHIM_CLASSPATH", classPath, ShimConfig.JCCL_SHIM_AOT_CACHE, cache.toString(),
                ShimConfig.JCCL_SHIM_JVM_OPTS, "-XX:AOTMode=on", "NCCL_DEBUG", "INFO"), "exchange");
        assertEquals(0, use.exitCode(), use.output());
        assertTrue(use.output().contains(", AOT cache " + cache + ")"), use.output());
        assertTrue(use.output().endsWith("OK\n"), use.output());

        // The same jars moved to another directory, with new times (a package copied to a node):
        // the cache still fits them.
        Path moved = Files.createDirectories(dir.resolve("moved"));
        List<String> movedJars = new ArrayList<>();
        for (String entry : classPath.split(File.pathSeparator)) {
            Path to = moved.resolve(Path.of(entry).getFileName());
            Files.copy(Path.of(entry), to);
            Files.setLastModifiedTime(to, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 5000));
            movedJars.add(to.toString());
        }
        Run relocated = driver(Map.of("JCCL_SHIM_CLASSPATH", String.join(File.pathSeparator, movedJars),
                ShimConfig.JCCL_SHIM_AOT_CACHE, cache.toString(), ShimConfig.JCCL_SHIM_JVM_OPTS, "-XX:AOTMode=on",
                "NCCL_DEBUG", "INFO"), "init");
        assertTrue(relocated.output().contains("init 0\n"), relocated.output());
        assertTrue(relocated.output().contains(", AOT cache " + cache + ")"), relocated.output());

        // A jar whose contents changed since the training run: JDK 25 would still load its old
        // classes from the cache, so the shim starts without it, with one warning.
        Path jar = Path.of(classPath.split(File.pathSeparator)[0]);
        Path rewritten = dir.resolve("rewritten.jar");
        try (var in = new java.util.zip.ZipInputStream(Files.newInputStream(jar));
             var out = new java.util.jar.JarOutputStream(Files.newOutputStream(rewritten))) {
            for (var e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
                out.putNextEntry(new java.util.jar.JarEntry(e.getName()));
                in.transferTo(out);
                out.closeEntry();
            }
            out.putNextEntry(new java.util.jar.JarEntry("changed.txt"));
            out.write(1);
            out.closeEntry();
        }
        Files.move(rewritten, jar, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Run stale = driver(Map.of("JCCL_SHIM_CLASSPATH", classPath, ShimConfig.JCCL_SHIM_AOT_CACHE, cache.toString(),
                "NCCL_DEBUG", "INFO"), "init");
        assertTrue(stale.output().contains("init 0\n"), stale.output());
        assertFalse(stale.output().contains(", AOT cache "), stale.output());
        assertEquals(1, stale.warnings().size(), stale.output());
        assertTrue(stale.warnings().get(0).contains("was not trained on these jars"), stale.output());

        // off: no cache, whatever is configured beside.
        Run off = driver(Map.of("JCCL_SHIM_CLASSPATH", classPath, ShimConfig.JCCL_SHIM_AOT_CACHE, "off",
                "NCCL_DEBUG", "INFO"), "init");
        assertTrue(off.output().contains("init 0\n"), off.output());
        assertFalse(off.output().contains("AOT cache"), off.output());
    }

    @Test
    void aNamedAotCacheThatIsMissingOrABadTrainingValueFailsInitWithOneWarning(@TempDir Path dir) throws Exception {
        assumeAotCache();
        Path missing = dir.resolve("none.aot");
        Run run = driver(Map.of(ShimConfig.JCCL_SHIM_AOT_CACHE, missing.toString()), "init");
        assertFalse(run.output().contains("init 0\n"), run.output());
        assertEquals(1, run.warnings().size(), run.output());
        assertTrue(run.warnings().get(0).contains("JCCL_SHIM_AOT_CACHE=" + missing + ": no such file"), run.output());

        Run bad = driver(Map.of(ShimConfig.JCCL_SHIM_AOT_TRAIN, "yes"), "init");
        assertFalse(bad.output().contains("init 0\n"), bad.output());
        assertEquals(1, bad.warnings().size(), bad.output());
        assertTrue(bad.warnings().get(0).contains("JCCL_SHIM_AOT_TRAIN=yes"), bad.output());

        Run both = driver(Map.of(ShimConfig.JCCL_SHIM_AOT_TRAIN, "1", ShimConfig.JCCL_SHIM_AOT_CACHE, "off"), "init");
        assertEquals(1, both.warnings().size(), both.output());
        assertTrue(both.warnings().get(0).contains("JCCL_SHIM_AOT_CACHE=off"), both.output());
    }

    @Test
    void theTrainerWritesTheCacheBesideTheLibraryOrWhereTheVariableSays(@TempDir Path dir) throws Exception {
        assumeAotCache();
        Path trainer = ShimLibrary.library().resolveSibling("jccl-shim-train");
        Path cache = dir.resolve("trained.aot");
        // What an older training left there is replaced, never kept beside this run's record.
        Files.writeString(cache, "an older cache");
        Run run = process(List.of(trainer.toString(), ShimLibrary.library().toString(), "3000"), Map.of(
                "JCCL_SHIM_CLASSPATH", classPathOfJars(dir), ShimConfig.JCCL_SHIM_AOT_CACHE, cache.toString()));
        assertEquals(0, run.exitCode(), run.output());
        // The shim's warm-up ran the rounds, then the finalize had the JVM write the cache.
        assertTrue(run.output().contains("NET/JCCL: warm-up: 3000 of 3000 loopback rounds"), run.output());
        assertTrue(run.output().contains("NET/JCCL: AOT cache written: " + cache), run.output());
        assertTrue(Files.size(cache) > 1000 && Files.size(Path.of(cache + ".classpath")) > 0, run.output());

        Run usage = process(List.of(trainer.toString()), Map.of());
        assertEquals(2, usage.exitCode(), usage.output());
        assertTrue(usage.output().contains("usage: "), usage.output());
        Run badRounds = process(List.of(trainer.toString(), ShimLibrary.library().toString(), "many"), Map.of());
        assertEquals(2, badRounds.exitCode(), badRounds.output());
        assertTrue(badRounds.output().contains("ROUNDS=many"), badRounds.output());
        // A shim that cannot start its JVM: the trainer says so and writes nothing.
        Run failed = process(List.of(trainer.toString(), ShimLibrary.library().toString()),
                Map.of("JCCL_SHIM_CLASSPATH", "/nonexistent.jar", ShimConfig.JCCL_SHIM_AOT_CACHE, dir.resolve("no.aot")
                        .toString()));
        assertEquals(1, failed.exitCode(), failed.output());
        assertTrue(failed.output().contains("WARN ") && failed.output().contains("JCCL_SHIM_CLASSPATH"), failed.output());
        assertFalse(Files.exists(dir.resolve("no.aot")), failed.output());
    }

    @Test
    void ofProcessesTrainingOneCacheTheFirstTrainsAndTheOthersRunWithoutTraining(@TempDir Path dir) throws Exception {
        // The ranks of one job share its environment: JCCL_SHIM_AOT_TRAIN=1 reaches all of them.
        assumeAotCache();
        String classPath = classPathOfJars(dir);
        Path cache = dir.resolve("shared.aot");
        Map<String, String> training = Map.of("JCCL_SHIM_CLASSPATH", classPath, ShimConfig.JCCL_SHIM_AOT_TRAIN, "1",
                ShimConfig.JCCL_SHIM_AOT_CACHE, cache.toString(), "NCCL_DEBUG", "INFO");
        // The first holds its training open for 4 s after init; the second starts within them.
        var first = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return driver(training, "warmup", "1000", "4000");
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        Thread.sleep(1500);
        Run second = driver(training, "exchange");
        Run one = first.get(120, TimeUnit.SECONDS);
        assertEquals(0, second.exitCode(), second.output());
        assertTrue(second.output().contains("another process is training AOT cache " + cache), second.output());
        assertFalse(second.output().contains("training AOT cache " + cache + ")"), second.output());
        assertEquals(0, one.exitCode(), one.output());
        assertTrue(one.output().contains("NET/JCCL: AOT cache written: " + cache), one.output());
    }
}
