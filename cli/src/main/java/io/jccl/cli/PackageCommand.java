package io.jccl.cli;

import io.jccl.nativenet.NativePluginSource;
import io.jccl.spi.NetPlugin;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

/**
 * {@code jccl package}: turns transport jars into a directory that NCCL loads as
 * {@code libnccl-net-NAME.so} ({@code NCCL_NET_PLUGIN=NAME}): a copy of the native shim, the JCCL
 * jars it runs (spi, shim) and the vendor's jars beside it (the shim's default class path), the
 * package file {@code libnccl-net-NAME.properties} that names the transport the shim runs
 * ({@code JCCL_SHIM_NET}), and with {@code --jlink} a Java runtime in {@code runtime/}. Then it
 * loads the package back through the native host in a child JVM, as {@code jccl plugins --plugin}
 * does, and prints what it found.
 *
 * <p>Exit status 0 if the package loads and its transport reports at least one device, 1 if the
 * check fails, 2 for a bad argument.
 */
@Command(name = "package",
        mixinStandardHelpOptions = true,
        description = {"Packages transport jars as a native NCCL net plugin: DIR/libnccl-net-NAME.so (the shim), "
                + "the JCCL jars and yours beside it, and libnccl-net-NAME.properties naming the transport; then "
                + "loads DIR/libnccl-net-NAME.so back through the native host and prints its devices.",
                "Under NCCL: NCCL_NET_PLUGIN=DIR/libnccl-net-NAME.so (or NAME with DIR on LD_LIBRARY_PATH).",
                "Exit status: 0 if the package loads and reports a device, 1 if the check fails, 2 for a bad "
                        + "argument."})
final class PackageCommand implements Callable<Integer> {
    /** What NCCL_NET_PLUGIN=NAME can name: libnccl-net-NAME.so. */
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]*");
    private static final String SERVICE = NetPlugin.class.getName();
    /** Modules every packaged runtime gets: JcclSocket's keep-alive tuning and JcclIB need jdk.net. */
    private static final List<String> BASE_MODULES = List.of("java.base", "jdk.net");
    private static final long CHECK_TIMEOUT_S = 120;

    @Option(names = "--jar", paramLabel = "JAR",
            description = "A jar of the transport (and any jar it needs besides JCCL's spi); repeatable, at least one.")
    private List<Path> jars = new ArrayList<>();

    @Option(names = "--name", paramLabel = "NAME",
            description = "Plugin name: the library is libnccl-net-NAME.so, loaded by NCCL_NET_PLUGIN=NAME "
                    + "(letters, digits, '.', '_', '-').")
    private String name;

    @Option(names = {"-o", "--out"}, paramLabel = "DIR",
            description = "Directory to create (or an empty one) for the package.")
    private Path out;

    @Option(names = {"-n", "--net"}, paramLabel = "TRANSPORT",
            description = "The transport the library runs (case-insensitive), among those the jars provide; "
                    + "default: the only one they provide.")
    private String net;

    @Option(names = "--jlink",
            description = "Also link a Java runtime into DIR/runtime (java.base, jdk.net and what jdeps finds the "
                    + "jars need), which the shim runs when JCCL_JAVA_HOME and JAVA_HOME are unset.")
    private boolean jlink;

    @Option(names = "--aot",
            description = "Also train the shim's AOT cache into DIR (jccl-shim-train; JDK 25+, on DIR/runtime with "
                    + "--jlink): the JVM the shim starts then compiles its data path at the first calls.")
    private boolean aot;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter w = spec.commandLine().getOut();
        List<Path> vendor = checkJars();
        String library = "libnccl-net-" + checkName() + ".so";
        checkOut();
        out = out.toAbsolutePath().normalize();
        String transport = chooseTransport(vendor);

        Files.createDirectories(out);
        Path so = out.resolve(library);
        copyShimResource(shimResource(), so);
        copyShimResource(trainerResource(), out.resolve(TRAINER));
        Set<String> copied = new TreeSet<>();
        for (Path jar : List.of(jarOf(shimClass()), jarOf(NetPlugin.class))) {
            copyJar(jar, copied);
        }
        for (Path jar : vendor) {
            copyJar(jar, copied);
        }
        Files.writeString(out.resolve("libnccl-net-" + name + ".properties"),
                "# Written by jccl package. The Java transport " + library + " runs under NCCL; JCCL_SHIM_NET,\n"
                        + "# or NCCL_NET unless it names NCCL's IB or Socket, in the environment wins.\n"
                        + "JCCL_SHIM_NET=" + transport + "\n");
        w.println("packaged:\t" + so + " (transport " + transport + ", jars " + String.join(", ", copied) + ")");
        if (jlink) {
            List<String> modules = linkRuntime(out.resolve("runtime"));
            w.println("runtime:\t" + out.resolve("runtime") + " (" + String.join(",", modules) + ")");
        }
        w.flush();
        int checked = check(so, transport, w);
        return checked == 0 && aot ? train(so, w) : checked;
    }

    // ---- arguments ---------------------------------------------------------------------------

    private List<Path> checkJars() {
        if (jars.isEmpty()) {
            throw new IllegalArgumentException("--jar is missing: give the transport's jar (repeatable)");
        }
        List<Path> checked = new ArrayList<>();
        for (Path jar : jars) {
            if (!Files.isRegularFile(jar)) {
                throw new IllegalArgumentException("--jar " + jar + ": no such file; give a transport jar");
            }
            try (JarFile ignored = new JarFile(jar.toFile())) {
                checked.add(jar.toAbsolutePath().normalize());
            } catch (IOException e) {
                throw new IllegalArgumentException("--jar " + jar + ": not a jar file (" + e.getMessage() + ")");
            }
        }
        return checked;
    }

    private String checkName() {
        if (name == null) {
            throw new IllegalArgumentException("--name is missing: the plugin name NAME of libnccl-net-NAME.so");
        }
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("--name " + name + ": letters, digits, '.', '_' and '-' only, "
                    + "starting with a letter or digit (NCCL_NET_PLUGIN=NAME loads libnccl-net-NAME.so)");
        }
        return name;
    }

    private void checkOut() throws IOException {
        if (out == null) {
            throw new IllegalArgumentException("--out is missing: the directory to create for the package");
        }
        if (Files.exists(out)) {
            boolean empty;
            if (!Files.isDirectory(out)) {
                empty = false;
            } else {
                try (Stream<Path> entries = Files.list(out)) {
                    empty = entries.findAny().isEmpty();
                }
            }
            if (!empty) {
                throw new IllegalArgumentException("--out " + out + ": exists and is not an empty directory; give a "
                        + "new or empty directory");
            }
        }
    }

    /** @return the transport's name: --net if the jars provide it, else the only one they provide */
    private String chooseTransport(List<Path> vendor) throws IOException {
        Map<String, String> provided = transports(vendor);
        String listed = String.join(", ", provided.keySet());
        if (provided.isEmpty()) {
            throw new IllegalArgumentException("--jar " + vendor.stream().map(Path::toString).toList()
                    + ": no provider of " + SERVICE + " (META-INF/services or module-info 'provides'); give the "
                    + "transport's jar");
        }
        if (net != null) {
            return provided.keySet().stream().filter(n -> n.equalsIgnoreCase(net.trim())).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("--net " + net + ": the jars provide " + listed));
        }
        if (provided.size() > 1) {
            throw new IllegalArgumentException("the jars provide several transports (" + listed
                    + "): choose one with --net");
        }
        return provided.keySet().iterator().next();
    }

    /**
     * The transports the jars provide, name to class: the providers their service files and
     * module-info declare, instantiated in a class loader of their own (the jars and JCCL's spi)
     * and asked their {@code name()}. Nothing is initialised.
     */
    private static Map<String, String> transports(List<Path> vendor) throws IOException {
        Set<String> classes = new LinkedHashSet<>();
        for (Path jar : vendor) {
            try (JarFile j = new JarFile(jar.toFile())) {
                JarEntry services = j.getJarEntry("META-INF/services/" + SERVICE);
                if (services != null) {
                    try (InputStream in = j.getInputStream(services)) {
                        new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                                .map(l -> l.replaceFirst("#.*", "").trim()).filter(l -> !l.isEmpty())
                                .forEach(classes::add);
                    }
                }
                JarEntry info = j.getJarEntry("module-info.class");
                if (info != null) {
                    try (InputStream in = j.getInputStream(info)) {
                        ModuleDescriptor d = ModuleDescriptor.read(in);
                        d.provides().stream().filter(p -> p.service().equals(SERVICE))
                                .forEach(p -> classes.addAll(p.providers()));
                    }
                }
            }
        }
        List<URL> urls = new ArrayList<>();
        for (Path jar : vendor) {
            urls.add(jar.toUri().toURL());
        }
        urls.add(jarOf(NetPlugin.class).toUri().toURL());
        Map<String, String> names = new LinkedHashMap<>();
        try (URLClassLoader loader = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader())) {
            for (String type : classes) {
                try {
                    Class<?> c = Class.forName(type, false, loader);
                    Object plugin;
                    try {
                        plugin = c.getMethod("provider").invoke(null);
                    } catch (NoSuchMethodException e) {
                        plugin = c.getConstructor().newInstance();
                    }
                    names.put(String.valueOf(c.getMethod("name").invoke(plugin)), type);
                } catch (ReflectiveOperationException | LinkageError e) {
                    Throwable cause = e.getCause() != null ? e.getCause() : e;
                    throw new IllegalArgumentException("--jar: cannot instantiate the transport " + type + " ("
                            + cause + "); give the jars it needs with more --jar");
                }
            }
        }
        return names;
    }

    // ---- writing -----------------------------------------------------------------------------

    /** The shim's Java half (a run-time dependency of the cli): its jar holds the shim library too. */
    static Class<?> shimClass() {
        try {
            return Class.forName("io.jccl.shim.ShimBridge");
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("the shim's jar (jccl-shim, io.jccl.shim.ShimBridge) is not on the class "
                    + "path: build plugins/shim");
        }
    }

    /** The shim library from the jccl-shim jar's resources (META-INF/native/linux-ARCH/libnccl-net.so). */
    static String shimResource() {
        return "/META-INF/native/linux-" + System.getProperty("os.arch") + "/libnccl-net.so";
    }

    /** The trainer of the shim's AOT cache, beside the library in the package. */
    static final String TRAINER = "jccl-shim-train";

    /** The AOT cache's trainer from the jccl-shim jar's resources. */
    static String trainerResource() {
        return "/META-INF/native/linux-" + System.getProperty("os.arch") + "/" + TRAINER;
    }

    private static void copyShimResource(String resource, Path to) throws IOException {
        try (InputStream in = shimClass().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("the jccl-shim jar " + jarOf(shimClass()) + " has no "
                        + resource + ": build plugins/shim (it needs gcc) on this platform");
            }
            Files.copy(in, to);
        }
        Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /** @return the jar a class comes from */
    static Path jarOf(Class<?> type) {
        try {
            Path where = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (!Files.isRegularFile(where)) {
                throw new IllegalStateException(type.getName() + " comes from " + where + ", not a jar: run jccl "
                        + "package from the built jars (mvn package, bin/jccl)");
            }
            return where;
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Copies a jar beside the library, once per file name; a different jar of the same name is an error. */
    private void copyJar(Path jar, Set<String> copied) throws IOException {
        String file = jar.getFileName().toString();
        Path to = out.resolve(file);
        if (copied.contains(file)) {
            if (Files.mismatch(jar, to) != -1) {
                throw new IllegalArgumentException("--jar " + jar + ": another jar of the same name, " + file
                        + ", is in the package already");
            }
            return;
        }
        Files.copy(jar, to);
        copied.add(file);
    }

    /** jlinks java.base, jdk.net and the modules jdeps finds the package's jars need. */
    private List<String> linkRuntime(Path runtime) throws IOException {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new IllegalStateException(
                "--jlink: this Java runtime (" + System.getProperty("java.home") + ") has no jdeps; run bin/jccl on a JDK"));
        ToolProvider jlinkTool = ToolProvider.findFirst("jlink").orElseThrow(() -> new IllegalStateException(
                "--jlink: this Java runtime (" + System.getProperty("java.home") + ") has no jlink; run bin/jccl on a JDK"));
        List<String> args = new ArrayList<>(List.of("--ignore-missing-deps", "--print-module-deps", "--multi-release",
                Integer.toString(Runtime.version().feature())));
        try (Stream<Path> files = Files.list(out)) {
            files.filter(p -> p.toString().endsWith(".jar")).sorted().forEach(p -> args.add(p.toString()));
        }
        String deps = runTool(jdeps, args);
        Set<String> modules = new TreeSet<>(BASE_MODULES);
        if (aot) {
            // The training run ends its recording through the JVM's diagnostic command (the shim's AotTraining).
            modules.addAll(List.of("java.management", "jdk.management", "jdk.jfr"));
        }
        for (String m : deps.trim().split(",")) {
            if (m.matches("[a-z][a-z0-9.]*")) {
                modules.add(m);
            }
        }
        runTool(jlinkTool, List.of("--add-modules", String.join(",", modules), "--output", runtime.toString(),
                "--strip-debug", "--no-man-pages", "--no-header-files", "--compress=zip-6"));
        return List.copyOf(modules);
    }

    private static String runTool(ToolProvider tool, List<String> args) {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        try (PrintStream ps = new PrintStream(text, true, StandardCharsets.UTF_8)) {
            int rc = tool.run(ps, ps, args.toArray(String[]::new));
            String output = text.toString(StandardCharsets.UTF_8);
            if (rc != 0) {
                throw new IllegalStateException(tool.name() + " failed (" + rc + "): "
                        + output.lines().filter(l -> !l.isBlank()).findFirst().orElse("no output"));
            }
            return output;
        }
    }

    // ---- the check ---------------------------------------------------------------------------

    /**
     * Loads the package back through the native host in a child JVM ({@link PackageCheck}): the
     * runtime of the package if it has one, else this JVM's. The child's class path holds the
     * native host and the spi only, and the variables that would choose another transport or class
     * path are removed, so that the shim finds the transport through the package alone.
     */
    private int check(Path so, String transport, PrintWriter w) throws IOException, InterruptedException {
        Path runtime = out.resolve("runtime");
        Path java = Files.isExecutable(runtime.resolve("bin/java")) ? runtime.resolve("bin/java")
                : Path.of(System.getProperty("java.home"), "bin", "java");
        List<String> cp = List.of(jarOf(NativePluginSource.class).toString(), jarOf(NetPlugin.class).toString(),
                codeSource(PackageCheck.class));
        ProcessBuilder pb = new ProcessBuilder(java.toString(), "--enable-native-access=ALL-UNNAMED", "-cp",
                String.join(File.pathSeparator, cp), PackageCheck.class.getName(), so.toString(), transport)
                .redirectErrorStream(true);
        removeChoosingVariables(pb.environment());
        w.println("check:\t\tloading " + so + " through the native host (" + java + ")");
        w.flush();
        Process p = pb.start();
        byte[] output;
        try (InputStream in = p.getInputStream()) {
            if (!p.waitFor(CHECK_TIMEOUT_S, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("check: loading " + so + " did not finish within " + CHECK_TIMEOUT_S + " s");
            }
            output = in.readAllBytes();
        }
        String failure = null;
        for (String line : new String(output, StandardCharsets.UTF_8).lines().toList()) {
            if (line.startsWith(PackageCheck.FAILED)) {
                failure = line.substring(PackageCheck.FAILED.length());
            } else {
                w.println(line);
            }
        }
        w.flush();
        int status = p.exitValue();
        if (status != 0) {
            throw new IllegalStateException("check failed: " + (failure != null ? failure
                    : "the JVM that loaded " + so + " exited with status " + status + " (" + java + ")"));
        }
        w.println("OK: " + so + " loads as NCCL net plugin " + transport + "; use NCCL_NET_PLUGIN=" + so
                + " (or NCCL_NET_PLUGIN=" + name + " with " + out.toAbsolutePath() + " on LD_LIBRARY_PATH)");
        w.flush();
        return 0;
    }

    // ---- the AOT cache (--aot) ------------------------------------------------------------------

    private static final long TRAIN_TIMEOUT_S = 300;

    /**
     * Runs the package's trainer on its library, with the JVM the package will start under NCCL
     * (its runtime/ where it has one: JCCL_JAVA_HOME and JAVA_HOME removed) and the variables that
     * would choose another transport, class path or cache removed. Its output goes to a file (the
     * JVM writing a cache prints much); its verdict lines are printed.
     */
    private int train(Path so, PrintWriter w) throws IOException, InterruptedException {
        Path log = Files.createTempFile("jccl-shim-train", ".log");
        try {
            ProcessBuilder pb = new ProcessBuilder(out.resolve(TRAINER).toString(), so.toString())
                    .redirectErrorStream(true).redirectOutput(log.toFile());
            Map<String, String> env = pb.environment();
            removeChoosingVariables(env);
            env.keySet().removeIf(k -> k.startsWith("JCCL_SHIM_AOT") || k.equals("JCCL_SHIM_JVM_OPTS"));
            if (Files.isDirectory(out.resolve("runtime"))) {
                env.remove("JCCL_JAVA_HOME");
                env.remove("JAVA_HOME");
            }
            w.println("aot:		training " + out.resolve("jccl-shim.aot") + " (" + TRAINER + ")");
            w.flush();
            Process p = pb.start();
            if (!p.waitFor(TRAIN_TIMEOUT_S, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("--aot: training did not finish within " + TRAIN_TIMEOUT_S + " s (its "
                        + "output: " + log + ")");
            }
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            String verdict = null;
            for (String line : lines) {
                if (line.contains("AOT cache written") || line.startsWith("WARN ") || line.contains(TRAINER + ":")) {
                    w.println("aot:		" + line);
                    verdict = verdict == null ? line : verdict;
                }
            }
            w.flush();
            if (p.exitValue() != 0) {
                throw new IllegalStateException("--aot: training failed (exit " + p.exitValue() + ")"
                        + (verdict == null ? "" : ": " + verdict));
            }
            return 0;
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /** Removes the variables that would choose another transport or class path than the package's. */
    private static void removeChoosingVariables(Map<String, String> env) {
        env.keySet().removeIf(k -> k.equals("JCCL_SHIM_NET") || k.equals("JCCL_SHIM_CLASSPATH") || k.equals("NCCL_NET")
                || k.equals("NCCL_NET_PLUGIN") || k.equals("JCCL_SHIM_COLLNET"));
    }

    private static String codeSource(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new UncheckedIOException(new IOException(e));
        }
    }
}
