package io.jccl.cli;

import io.jccl.nativenet.NativeCollNetPlugin;
import io.jccl.nativenet.NativeNetPlugin;
import io.jccl.nativenet.NativePluginSource;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.PointerType;
import io.jccl.spi.config.Env;
import io.jccl.spi.config.SpiConfig;
import io.jccl.spi.discovery.NetPluginDiscovery;
import io.jccl.spi.discovery.NetSelection;
import io.jccl.spi.log.DebugLogger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@code jccl plugins}: every transport this JVM can find, initialised, with its devices and their
 * properties, in the manner of {@code ibv_devinfo}; then which one {@code NCCL_NET} selection picks.
 *
 * <p>Exit status 0 if at least one transport is usable, 1 if none is.
 */
@Command(name = "plugins",
        mixinStandardHelpOptions = true,
        description = {"Lists every transport found (ServiceLoader, class path and module path, the native "
                + "plugins of NCCL_NET_PLUGIN and of --plugin), initialises it and prints its devices and their "
                + "properties, like ibv_devinfo.",
                "Exit status: 0 if at least one transport is usable, 1 if none is, 5 if a native plugin crashed the "
                        + "(child) JVM that loaded it."})
final class PluginsCommand implements Callable<Integer> {

    @Option(names = {"-n", "--net"}, paramLabel = "NAME",
            description = "Show only the transport of this name (case-insensitive).")
    private String only;

    @Option(names = "--plugin", paramLabel = "PATH",
            description = "Also load this native ncclNet/ncclCollNet plugin library (a path, or a name as in "
                    + "NCCL_NET_PLUGIN); repeatable.")
    private List<String> nativePlugins = new ArrayList<>();

    @Spec
    private CommandSpec spec;

    private final Function<List<String>, NetPluginDiscovery> discovery;
    private final Supplier<NetLogger> logger;

    PluginsCommand() {
        this(PluginsCommand::discover, DebugLogger::fromEnvironment);
    }

    PluginsCommand(Supplier<NetPluginDiscovery> discovery, Supplier<NetLogger> logger) {
        this(paths -> paths.isEmpty() ? discovery.get() : discover(paths), logger);
    }

    private PluginsCommand(Function<List<String>, NetPluginDiscovery> discovery, Supplier<NetLogger> logger) {
        this.discovery = discovery;
        this.logger = logger;
    }

    /** ServiceLoader's transports (NCCL_NET_PLUGIN's native ones among them), after the libraries given. */
    private static NetPluginDiscovery discover(List<String> nativeLibraries) {
        NetPluginDiscovery.Builder b = NetPluginDiscovery.builder();
        if (!nativeLibraries.isEmpty()) {
            b.addSource(NativePluginSource.of(nativeLibraries));
        }
        return b.serviceLoader(Thread.currentThread().getContextClassLoader()).build();
    }

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        NetLogger log = logger.get();
        NetPluginDiscovery found = discovery.apply(nativePlugins);
        int usable = 0;
        int shown = 0;
        for (NetPlugin plugin : found.netPlugins()) {
            if (selected(plugin.name())) {
                shown++;
                usable += printNet(out, plugin, log) ? 1 : 0;
            }
        }
        for (CollNetPlugin plugin : found.collNetPlugins()) {
            if (selected(plugin.name())) {
                shown++;
                usable += printCollNet(out, plugin, log) ? 1 : 0;
            }
        }
        if (shown == 0) {
            out.println(only == null
                    ? "No transport found. Put a transport jar on the class path (bin/jccl adds JCCL_CLASSPATH)."
                    : "No transport named " + only + ".");
        }
        for (String problem : found.problems()) {
            out.println("problem:\t" + problem);
        }
        if (only == null && !found.netPlugins().isEmpty()) {
            out.println(describeSelection(found, log));
        }
        out.flush();
        return usable > 0 ? 0 : 1;
    }

    private boolean selected(String name) {
        return only == null || only.equalsIgnoreCase(name);
    }

    private static String describeSelection(NetPluginDiscovery found, NetLogger log) {
        String requested = Env.get(SpiConfig.NCCL_NET);
        String rule = requested == null ? "first usable transport (NCCL_NET unset)" : SpiConfig.NCCL_NET + "=" + requested;
        try {
            NetSelection s = found.selectNet(requested, log);
            return "selected:\t" + s.plugin().name() + "\t(" + rule + ")";
        } catch (NetException e) {
            return "selected:\tnone\t(" + rule + "): " + e.getMessage();
        }
    }

    /** The calls {@code plugins} makes, common to {@link NetPlugin} and {@link CollNetPlugin}. */
    private interface Probe {
        void init() throws NetException;

        int devices() throws NetException;

        NetProperties properties(int dev) throws NetException;
    }

    private static boolean printNet(PrintWriter out, NetPlugin plugin, NetLogger log) {
        String kind = plugin instanceof NativeNetPlugin n
                ? "ncclNet v" + n.apiVersion().number() + " (native plugin)"
                : "ncclNet " + NetPlugin.API_VERSION.name().toLowerCase(Locale.ROOT);
        return print(out, plugin.name(), kind, plugin,
                new Probe() {
                    public void init() throws NetException {
                        plugin.init(log);
                    }

                    public int devices() throws NetException {
                        return plugin.devices();
                    }

                    public NetProperties properties(int dev) throws NetException {
                        return plugin.getProperties(dev);
                    }
                });
    }

    private static boolean printCollNet(PrintWriter out, CollNetPlugin plugin, NetLogger log) {
        String kind = plugin instanceof NativeCollNetPlugin n
                ? "ncclCollNet v" + n.apiVersion().number() + " (native plugin)"
                : "ncclCollNet " + CollNetPlugin.API_VERSION.name().toLowerCase(Locale.ROOT);
        return print(out, plugin.name(), kind, plugin, new Probe() {
                    public void init() throws NetException {
                        plugin.init(log);
                    }

                    public int devices() throws NetException {
                        return plugin.devices();
                    }

                    public NetProperties properties(int dev) throws NetException {
                        return plugin.getProperties(dev);
                    }
                });
    }

    private static boolean print(PrintWriter out, String name, String kind, Object plugin, Probe probe) {
        header(out, name, kind, plugin);
        try {
            probe.init();
            int n = probe.devices();
            field(out, 1, "state", n > 0 ? "ready" : "no devices");
            field(out, 1, "devices", Integer.toString(n));
            for (int dev = 0; dev < n; dev++) {
                printDevice(out, dev, probe.properties(dev));
            }
            out.println();
            return n > 0;
        } catch (NetException | RuntimeException | LinkageError e) {
            field(out, 1, "state", "unavailable: " + e);
            out.println();
            return false;
        }
    }

    private static void header(PrintWriter out, String name, String kind, Object plugin) {
        out.println("transport:\t" + name);
        field(out, 1, "kind", kind);
        field(out, 1, "class", plugin.getClass().getName());
        field(out, 1, "from", plugin instanceof NativeNetPlugin n ? n.library().file()
                : plugin instanceof NativeCollNetPlugin c ? c.library().file() : origin(plugin.getClass()));
    }

    private static void printDevice(PrintWriter out, int dev, NetProperties p) {
        field(out, 1, "dev " + dev, p.name());
        field(out, 2, "pci_path", p.pciPath() == null ? "(virtual)" : p.pciPath());
        field(out, 2, "guid", String.format(Locale.ROOT, "0x%016x", p.guid()));
        field(out, 2, "ptr_support", PointerType.describe(p.ptrSupport()));
        field(out, 2, "speed", p.speedMbps() + " Mbps");
        field(out, 2, "port", Integer.toString(p.port()));
        field(out, 2, "latency", p.latencyUs() + " us");
        field(out, 2, "max_comms", Integer.toString(p.maxComms()));
        field(out, 2, "max_recvs", Integer.toString(p.maxRecvs()));
        field(out, 2, "reg_is_global", p.regIsGlobal() ? "1" : "0");
        field(out, 2, "force_flush", p.forceFlush() ? "1" : "0");
        field(out, 2, "max_p2p_bytes", Long.toString(p.maxP2pBytes()));
        field(out, 2, "max_coll_bytes", Long.toString(p.maxCollBytes()));
    }

    private static void field(PrintWriter out, int indent, String name, String value) {
        out.println("\t".repeat(indent) + String.format(Locale.ROOT, "%-16s%s", name + ":", value));
    }

    private static String origin(Class<?> type) {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        return source == null || source.getLocation() == null ? "(unknown)" : source.getLocation().getPath();
    }
}
