package io.jccl.cli;

import io.jccl.nativenet.NativeHostConfig;
import io.jccl.nativenet.NativeNetPlugin;
import io.jccl.nativenet.NativePluginLibrary;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.config.Env;
import io.jccl.spi.discovery.NetPluginDiscovery;
import io.jccl.tck.CollNetPluginTck;
import io.jccl.tck.ConformanceRule;
import io.jccl.tck.NetPluginTck;
import io.jccl.tck.RuleLevel;
import io.jccl.tck.TckConfig;
import io.jccl.tck.TckSettings;
import io.jccl.tck.run.DiscoveredCollNetPluginTck;
import io.jccl.tck.run.DiscoveredNetPluginTck;
import io.jccl.tck.run.RuleOutcome;
import io.jccl.tck.run.TckResult;
import io.jccl.tck.run.TckRunner;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * {@code jccl tck}: runs the conformance kit against a transport and prints one row per rule, then
 * writes JUnit XML and a Markdown report. A thin front over {@link TckRunner}.
 */
@Command(name = "tck",
        mixinStandardHelpOptions = true,
        description = {"Runs the conformance kit against a transport: one row per rule (id, level, PASS/FAIL/SKIP, "
                + "time, and for a failure why and where to look), then JUnit XML and report.md in the report "
                + "directory.",
                "Exit status: 0 if every required rule passed, 1 if one failed, 2 for a usage error, 3 if no rule "
                        + "ran because the transport failed a precondition (init, at least one device, the "
                        + "properties of every device), 4 if the transport (or the --native library) is not found, 5 if the "
                        + "--native library crashed the (child) JVM that ran the kit."})
final class TckCommand implements Callable<Integer> {
    static final int EXIT_REQUIRED_RULE_FAILED = 1;
    static final int EXIT_NOT_CHECKED = 3;
    static final int EXIT_NO_SUCH_TRANSPORT = 4;

    @Option(names = {"-n", "--net"}, paramLabel = "NAME",
            description = "Check the ncclNet transport of this name (case-insensitive), found by ServiceLoader.")
    private String net;

    @Option(names = "--native", paramLabel = "PATH.so",
            description = "Check a native ncclNet plugin library (libnccl-net-*.so, v6 to v12) through JCCL's "
                    + "native-plugin host; with --collnet, its ncclCollNet too.")
    private Path nativePlugin;

    @Option(names = "--collnet", paramLabel = "NAME",
            description = "Also check the ncclCollNet transport of this name (its rules are skipped without it).")
    private String collNet;

    @Option(names = "--required-only", description = "Run only the required rules.")
    private boolean requiredOnly;

    @Option(names = {"-r", "--rule"}, paramLabel = "ID", split = ",",
            description = "Run only these rules or areas, e.g. conn or xfer.2 (repeatable, comma-separated).")
    private List<String> rules = new ArrayList<>();

    @Option(names = "--report-dir", paramLabel = "DIR", defaultValue = "target/jccl-tck",
            description = "Where JUnit XML and report.md go (default: ${DEFAULT-VALUE}).")
    private Path reportDir;

    @Option(names = "--timeout-scale", paramLabel = "X",
            description = "Multiply every timeout of the kit (" + TckConfig.JCCL_TCK_TIMEOUT_SCALE + ").")
    private Double timeoutScale;

    @Option(names = "--max-size", paramLabel = "SIZE",
            description = "Largest message of the size rule, e.g. 1G (" + TckConfig.JCCL_TCK_MAX_SIZE + ", default 256M).")
    private String maxSize;

    @Option(names = "--seed", paramLabel = "N", description = "Seed of the random sizes and data, to replay a run ("
            + TckConfig.JCCL_TCK_SEED + ").")
    private String seed;

    @Option(names = "--list", description = "List the rules (id, level, what each checks, where to look) and exit.")
    private boolean list;

    @Spec
    private CommandSpec spec;

    private final Supplier<NetPluginDiscovery> discovery;

    TckCommand() {
        this(NetPluginDiscovery::load);
    }

    TckCommand(Supplier<NetPluginDiscovery> discovery) {
        this.discovery = discovery;
    }

    @Override
    public Integer call() throws IOException {
        PrintWriter out = spec.commandLine().getOut();
        if (list) {
            listRules(out);
            return 0;
        }
        if (nativePlugin != null) {
            return checkNative(out);
        }
        if (net == null) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "say which transport to check: --net NAME (or --native PATH.so, or --list)");
        }
        NetPluginDiscovery found = discovery.get();
        Optional<NetPlugin> plugin = found.findNet(net);
        if (plugin.isEmpty()) {
            out.println("No transport named " + net + ". Found: " + names(found.netPlugins().stream().map(NetPlugin::name)
                    .toList()) + ". Put its jar on the class path (bin/jccl adds JCCL_CLASSPATH).");
            out.flush();
            return EXIT_NO_SUCH_TRANSPORT;
        }
        Optional<CollNetPlugin> coll = collNet == null ? Optional.empty() : found.findCollNet(collNet);
        if (collNet != null && coll.isEmpty()) {
            out.println("No CollNet transport named " + collNet + ". Found: " + names(found.collNetPlugins().stream()
                    .map(CollNetPlugin::name).toList()) + ".");
            out.flush();
            return EXIT_NO_SUCH_TRANSPORT;
        }
        Map<String, String> parameters = parameters();
        parameters.put(TckRunner.NET_PARAMETER, net);
        if (collNet != null) {
            parameters.put(TckRunner.COLLNET_PARAMETER, collNet);
        }
        return run(out, plugin.get().name() + (coll.isPresent() ? " + " + coll.get().name() : ""),
                plugin.get().getClass().getName(), coll.map(c -> c.getClass().getName()), parameters,
                coll.isPresent() ? TckRunner.of(DiscoveredNetPluginTck.class, DiscoveredCollNetPluginTck.class)
                        : TckRunner.of(DiscoveredNetPluginTck.class));
    }

    /** The rules against a native library, through the native-plugin host. */
    private Integer checkNative(PrintWriter out) throws IOException {
        String path = nativePlugin.toString();
        NativePluginLibrary lib;
        try {
            lib = NativePluginLibrary.open(path);
        } catch (NetException e) {
            out.println("Cannot check " + path + ": " + e.getMessage());
            out.flush();
            return EXIT_NO_SUCH_TRANSPORT;
        }
        Optional<NativeNetPlugin> plugin = lib.netPlugin();
        if (plugin.isEmpty()) {
            out.println(lib.file() + " exports no ncclNetPlugin_v6..v12; nothing to check with --native.");
            out.flush();
            return EXIT_NO_SUCH_TRANSPORT;
        }
        boolean withCollNet = collNet != null;
        if (withCollNet && lib.collNetPlugin().filter(c -> c.name().equalsIgnoreCase(collNet)).isEmpty()) {
            out.println(lib.file() + " exports no CollNet transport named " + collNet + " (it has: "
                    + lib.collNetPlugin().map(c -> c.name()).orElse("none") + ").");
            out.flush();
            return EXIT_NO_SUCH_TRANSPORT;
        }
        // The peer JVM of rule fault.2 loads the same library: NCCL_* system properties follow it there.
        System.setProperty(NativeHostConfig.NCCL_NET_PLUGIN, lib.file());
        Map<String, String> parameters = parameters();
        parameters.put(NativePluginKits.LIBRARY_PARAMETER, lib.file());
        NativeNetPlugin p = plugin.get();
        return run(out, p.name() + " (native, ncclNet v" + p.apiVersion().number() + ")",
                p + "", withCollNet ? lib.collNetPlugin().map(Object::toString) : Optional.empty(), parameters,
                withCollNet ? TckRunner.of(NativePluginKits.Net.class, NativePluginKits.CollNet.class)
                        : TckRunner.of(NativePluginKits.Net.class));
    }

    private Integer run(PrintWriter out, String title, String transport, Optional<String> collNetTransport,
                        Map<String, String> parameters, TckRunner runner) throws IOException {
        TckSettings settings = TckSettings.from(k -> parameters.getOrDefault(k, Env.get(k)));
        out.println("JCCL conformance kit: " + title);
        out.println("  transport: " + transport);
        collNetTransport.ifPresent(c -> out.println("  collnet:   " + c));
        out.println("  settings:  " + settings);
        out.println();
        out.println(String.format(Locale.ROOT, "%-9s %-9s %-5s %8s  %s", "rule", "level", "result", "time", "what it checks"));
        out.flush();

        runner.requiredOnly(requiredOnly)
                .onlyRules(rules)
                .reportDirectory(reportDir)
                .title(title)
                .onRule(o -> {
                    out.println(o.row());
                    out.flush();
                });
        parameters.forEach(runner::parameter);
        TckResult result = runner.run();

        out.println();
        // The verdict line repeats the first problem; a run that checked nothing has just that one.
        if (!(result.checkedNothing() && result.problems().size() == 1)) {
            for (String problem : result.problems()) {
                out.println("problem: " + problem);
            }
        }
        out.println(result.summary());
        out.println(String.format(Locale.ROOT, "time: %.1f s in all, required rules %.1f s",
                result.wallTime().toMillis() / 1000.0, result.time(RuleLevel.REQUIRED).toMillis() / 1000.0));
        out.println(result.verdict());
        out.println("Reports: " + reportDir.toAbsolutePath());
        out.flush();
        return result.checkedNothing() ? EXIT_NOT_CHECKED : result.conformant() ? 0 : EXIT_REQUIRED_RULE_FAILED;
    }

    private Map<String, String> parameters() {
        Map<String, String> p = new LinkedHashMap<>();
        if (timeoutScale != null) {
            p.put(TckConfig.JCCL_TCK_TIMEOUT_SCALE, Double.toString(timeoutScale));
        }
        if (maxSize != null) {
            p.put(TckConfig.JCCL_TCK_MAX_SIZE, maxSize);
        }
        if (seed != null) {
            p.put(TckConfig.JCCL_TCK_SEED, seed);
        }
        return p;
    }

    private void listRules(PrintWriter out) {
        List<ConformanceRule> all = new ArrayList<>(ConformanceRule.all(NetPluginTck.class));
        all.addAll(ConformanceRule.all(CollNetPluginTck.class));
        for (ConformanceRule r : all) {
            if (requiredOnly && r.level() != RuleLevel.REQUIRED) {
                continue;
            }
            out.println(String.format(Locale.ROOT, "%-9s %-9s %s", r.id(), r.level().label(), r.title()));
            out.println(String.format(Locale.ROOT, "%-9s %-9s if this fails, check: %s", "", "", r.hint()));
            if (!r.ncclDocumented()) {
                out.println(String.format(Locale.ROOT, "%-9s %-9s beyond NCCL's documented contract: %s", "", "",
                        r.beyondNccl()));
            }
        }
        out.flush();
    }

    private static String names(List<String> names) {
        return names.isEmpty() ? "none" : String.join(", ", names);
    }
}
