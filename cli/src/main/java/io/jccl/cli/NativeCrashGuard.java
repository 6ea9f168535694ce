package io.jccl.cli;

import io.jccl.nativenet.NativeHostConfig;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Runs a {@code jccl} command that loads native plugins ({@code plugins} with {@code --plugin} or
 * {@code NCCL_NET_PLUGIN}, {@code tck --native}) in a child JVM, and watches it. A plugin that
 * faults in its own code (SIGSEGV, an abort) takes its whole process down, and no Java code can
 * catch that; in a child, only the child dies, and this JVM reports which plugin call (and which
 * kit rule) crashed, read from the child's fatal error report. The child inherits the environment,
 * stdin, stdout and stderr, and its exit status passes through.
 */
final class NativeCrashGuard {
    /** Set in the child, so that it runs the command itself. */
    static final String CHILD_PROPERTY = "jccl.native.child";
    /** Exit status when a native plugin crashed the child JVM. */
    static final int EXIT_PLUGIN_CRASHED = 5;

    private static final Pattern SIGNAL = Pattern.compile("^#\\s+(SIG[A-Z]+) \\(0x[0-9a-f]+\\)");
    private static final Pattern THREAD = Pattern.compile("^Current thread \\(0x[0-9a-f]+\\):\\s+(\\w+) \"([^\"]*)\"");
    private static final Pattern HOST_CALL = Pattern.compile("io\\.jccl\\.nativenet\\.Native(?:Coll)?NetPlugin\\.(\\w+)\\(");
    private static final Pattern FRAME = Pattern.compile("^#\\s*[A-Za-z]\\s+\\[([^\\]]+)\\](.*)$");
    private static final Pattern RULE_THREAD = Pattern.compile("^jccl-tck-((?:life|conn|xfer|fault|coll)\\.[0-9]+)-[0-9]+$");

    private NativeCrashGuard() {
    }

    /** @return the native libraries a command line would load into this JVM, if it is one this guard watches */
    static List<String> nativeLibraries(String[] args, Map<String, String> environment) {
        if (Boolean.getBoolean(CHILD_PROPERTY) || args.length == 0) {
            return List.of();
        }
        List<String> libraries = new ArrayList<>();
        String option = switch (args[0]) {
            case "plugins" -> "--plugin";
            case "tck" -> "--native";
            default -> null;
        };
        if (option == null) {
            return List.of();
        }
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals(option) && i + 1 < args.length) {
                libraries.add(args[++i]);
            } else if (args[i].startsWith(option + "=")) {
                libraries.add(args[i].substring(option.length() + 1));
            }
        }
        String configured = System.getProperty(NativeHostConfig.NCCL_NET_PLUGIN,
                environment.get(NativeHostConfig.NCCL_NET_PLUGIN));
        if (args[0].equals("plugins") && configured != null && !configured.isBlank()
                && !configured.trim().equalsIgnoreCase("none")) {
            libraries.add(NativeHostConfig.NCCL_NET_PLUGIN + "=" + configured);
        }
        return libraries;
    }

    /**
     * Runs {@code args} in a child JVM.
     *
     * @param report where this JVM says that the child crashed
     * @return the child's exit status, or {@link #EXIT_PLUGIN_CRASHED} if it died of a fault
     */
    static int run(String[] args, List<String> libraries, PrintStream report) throws IOException, InterruptedException {
        Path crashDir = Files.createTempDirectory("jccl-native-");
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-XX:ErrorFile=" + crashDir.resolve("hs_err_pid%p.log"));
        cmd.add("-XX:-CreateCoredumpOnCrash");
        cmd.add("-Xmx" + Runtime.getRuntime().maxMemory() / (1024 * 1024) + "m");
        cmd.add("-D" + CHILD_PROPERTY + "=true");
        for (Map.Entry<Object, Object> e : System.getProperties().entrySet()) {
            String k = e.getKey().toString();
            if (k.startsWith("NCCL_") || k.startsWith("JCCL_") || (k.startsWith("jccl.") && !k.equals(CHILD_PROPERTY))) {
                cmd.add("-D" + k + "=" + e.getValue());
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(Jccl.class.getName());
        cmd.addAll(List.of(args));
        Process child = new ProcessBuilder(cmd).inheritIO().start();
        int status = child.waitFor();
        Optional<Path> errorReport;
        try (Stream<Path> files = Files.list(crashDir)) {
            errorReport = files.filter(p -> p.getFileName().toString().startsWith("hs_err")).findFirst();
        }
        if (errorReport.isEmpty() && status < 128) {
            deleteQuietly(crashDir);
            return status;
        }
        report.println(describe(libraries, status, errorReport));
        report.flush();
        return EXIT_PLUGIN_CRASHED;
    }

    /** The one line that says what crashed, from the child's fatal error report where there is one. */
    static String describe(List<String> libraries, int status, Optional<Path> errorReport) throws IOException {
        String what = "native plugin " + String.join(", ", libraries);
        if (errorReport.isEmpty()) {
            return "CRASHED: the JVM that ran the " + what + " was killed by signal " + (status - 128)
                    + " (exit status " + status + ") without a fatal error report.";
        }
        String signal = "a fatal error";
        String frame = null;
        String thread = null;
        String call = null;
        List<String> lines = Files.readAllLines(errorReport.get());
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i);
            Matcher m;
            if (signal.equals("a fatal error") && (m = SIGNAL.matcher(l)).find()) {
                signal = m.group(1);
            } else if (frame == null && l.startsWith("# Problematic frame:") && i + 1 < lines.size()) {
                frame = frame(lines.get(i + 1));
            } else if (thread == null && (m = THREAD.matcher(l)).find()) {
                thread = m.group(2);
            } else if (call == null && (l.startsWith("j ") || l.startsWith("J ")) && (m = HOST_CALL.matcher(l)).find()) {
                call = hostCall(m.group(1));
            }
        }
        StringBuilder sb = new StringBuilder("CRASHED: the ").append(what).append(" crashed the JVM that ran it: ")
                .append(signal);
        if (frame != null) {
            sb.append(" in ").append(frame);
        }
        if (call != null) {
            sb.append(", in its ").append(call);
        }
        if (thread != null) {
            Matcher rule = RULE_THREAD.matcher(thread);
            if (rule.find()) {
                sb.append(", during kit rule ").append(rule.group(1));
            } else if (thread.startsWith("jccl-tck-set-up")) {
                sb.append(", during the kit's set-up (its preconditions)");
            } else if (call == null) {
                sb.append(", on thread ").append(thread);
            }
        }
        return sb.append(". NCCL's process would crash the same way; this JVM survived because the command ran in a ")
                .append("child. Fatal error report: ").append(errorReport.get()).toString();
    }

    /** {@code # C  [libfoo.so+0x1261]  init+0xcf} becomes {@code libfoo.so+0x1261 (init+0xcf)}. */
    private static String frame(String line) {
        Matcher m = FRAME.matcher(line);
        if (!m.find()) {
            return line.replaceFirst("^#\\s*", "").trim();
        }
        return m.group(1) + (m.group(2).isBlank() ? "" : " (" + m.group(2).trim() + ")");
    }

    /** The plugin function behind a method of the host: its helpers are named after what they call. */
    private static String hostCall(String method) {
        return switch (method) {
            case "callInit" -> "init";
            case "callDevices" -> "devices";
            case "finalizeAfterFailedSetUp" -> "finalize";
            default -> method;
        };
    }

    private static void deleteQuietly(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // A temporary folder left behind is harmless.
        }
    }
}
