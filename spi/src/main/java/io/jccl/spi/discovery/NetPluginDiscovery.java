package io.jccl.spi.discovery;

import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetResult;
import io.jccl.spi.config.Env;
import io.jccl.spi.config.SpiConfig;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.function.Function;

/**
 * The transports available to this JVM, and NCCL's rules for choosing one.
 *
 * <p>Transports come, in this order, from explicit {@link Builder#add additions}, from
 * {@link NetPluginSource}s, and from {@link ServiceLoader} ({@code io.jccl.spi.NetPlugin} and
 * {@code io.jccl.spi.CollNetPlugin} providers, on the module path or the class path). A provider
 * that fails to load is recorded in {@link #problems()} instead of failing discovery.
 *
 * <p>{@link #selectNet(String, NetLogger)} then picks one as NCCL picks its network: a transport
 * named by {@code NCCL_NET} (case-insensitive) if set, otherwise the first that initialises and
 * reports at least one device.
 */
public final class NetPluginDiscovery {
    private final List<NetPlugin> netPlugins;
    private final List<CollNetPlugin> collNetPlugins;
    private final List<String> problems;

    private NetPluginDiscovery(List<NetPlugin> netPlugins, List<CollNetPlugin> collNetPlugins, List<String> problems) {
        this.netPlugins = List.copyOf(netPlugins);
        this.collNetPlugins = List.copyOf(collNetPlugins);
        this.problems = List.copyOf(problems);
    }

    /** @return the transports found through ServiceLoader with the thread's context class loader */
    public static NetPluginDiscovery load() {
        return builder().serviceLoader(Thread.currentThread().getContextClassLoader()).build();
    }

    /** @return a builder with no transports and no ServiceLoader lookup */
    public static Builder builder() {
        return new Builder();
    }

    /** @return every point-to-point transport found, in selection order */
    public List<NetPlugin> netPlugins() {
        return netPlugins;
    }

    /** @return every CollNet transport found */
    public List<CollNetPlugin> collNetPlugins() {
        return collNetPlugins;
    }

    /** @return providers and sources that failed to load, one line each */
    public List<String> problems() {
        return problems;
    }

    /** @return the first point-to-point transport of this name, case-insensitive */
    public Optional<NetPlugin> findNet(String name) {
        return netPlugins.stream().filter(p -> p.name().equalsIgnoreCase(name)).findFirst();
    }

    /** @return the first CollNet transport of this name, case-insensitive */
    public Optional<CollNetPlugin> findCollNet(String name) {
        return collNetPlugins.stream().filter(p -> p.name().equalsIgnoreCase(name)).findFirst();
    }

    /**
     * Selects a transport as NCCL does, with the name from {@code NCCL_NET}.
     *
     * @see #selectNet(String, NetLogger)
     */
    public NetSelection selectNet(NetLogger logger) throws NetException {
        return selectNet(Env.get(SpiConfig.NCCL_NET), logger);
    }

    /**
     * Selects and initialises a transport.
     *
     * <p>With a name: the transports of that name (case-insensitive) are tried in order; an unknown
     * name fails with the list of names available. Without: every transport is tried in order, and
     * the first whose {@code init} succeeds and whose {@code devices()} is at least 1 wins.
     * Transports tried and not chosen are closed.
     *
     * @param name   the transport's name, or {@code null} for the first usable one
     * @param logger passed to {@code init}; selection logs there under {@link LogSubsystem#NET}
     * @return the initialised transport
     * @throws NetException {@link NetResult#INVALID_USAGE} if no transport has that name, or if none
     *                      could be initialised (the message gives each one's reason)
     */
    public NetSelection selectNet(String name, NetLogger logger) throws NetException {
        Objects.requireNonNull(logger, "logger");
        List<NetPlugin> candidates = name == null ? netPlugins
                : netPlugins.stream().filter(p -> p.name().equalsIgnoreCase(name)).toList();
        if (candidates.isEmpty()) {
            throw NetException.invalidUsage(name == null
                    ? "no transport found: put a transport jar (such as jccl-net-socket) on the class path"
                            + problemsSuffix()
                    : SpiConfig.NCCL_NET + "=" + name + " matches no transport; available: "
                            + describe(netPlugins, NetPlugin::name) + problemsSuffix());
        }
        List<String> skipped = new ArrayList<>();
        for (NetPlugin plugin : candidates) {
            String why;
            try {
                plugin.init(logger);
                int devices = plugin.devices();
                if (devices >= 1) {
                    logger.info(LogSubsystem.NET | LogSubsystem.INIT, "NET/Discovery: using %s (%d device%s)",
                            plugin.name(), devices, devices == 1 ? "" : "s");
                    return new NetSelection(plugin, devices, skipped);
                }
                why = "no devices";
            } catch (NetException | RuntimeException | LinkageError e) {
                why = "init failed: " + e;
            }
            skipped.add(plugin.name() + ": " + why);
            logger.info(LogSubsystem.NET | LogSubsystem.INIT, "NET/Discovery: skipping %s: %s", plugin.name(), why);
            closeQuietly(plugin);
        }
        throw NetException.invalidUsage((name == null ? "no transport could be initialised"
                : SpiConfig.NCCL_NET + "=" + name + " could not be initialised") + ": " + String.join("; ", skipped));
    }

    private static void closeQuietly(NetPlugin plugin) {
        try {
            plugin.close();
        } catch (NetException | RuntimeException e) {
            // The plugin is being discarded; its close failure changes nothing for the caller.
        }
    }

    private String problemsSuffix() {
        return problems.isEmpty() ? "" : " (providers that failed to load: " + String.join("; ", problems) + ")";
    }

    private static <T> String describe(List<T> plugins, Function<T, String> name) {
        if (plugins.isEmpty()) {
            return "none";
        }
        List<String> names = new ArrayList<>();
        for (T p : plugins) {
            names.add(name.apply(p));
        }
        return String.join(", ", names);
    }

    /** Collects transports; see {@link NetPluginDiscovery} for the order. */
    public static final class Builder {
        private final List<NetPlugin> explicitNet = new ArrayList<>();
        private final List<CollNetPlugin> explicitCollNet = new ArrayList<>();
        private final List<NetPluginSource> sources = new ArrayList<>();
        private ClassLoader serviceLoader;
        private boolean useServiceLoader;

        private Builder() {
        }

        /** Adds a point-to-point transport, tried before all discovered ones. */
        public Builder add(NetPlugin plugin) {
            explicitNet.add(Objects.requireNonNull(plugin, "plugin"));
            return this;
        }

        /** Adds a CollNet transport, listed before all discovered ones. */
        public Builder add(CollNetPlugin plugin) {
            explicitCollNet.add(Objects.requireNonNull(plugin, "plugin"));
            return this;
        }

        /** Adds a source, such as the native-plugin host; its transports follow the explicit ones. */
        public Builder addSource(NetPluginSource source) {
            sources.add(Objects.requireNonNull(source, "source"));
            return this;
        }

        /**
         * Also finds {@code NetPlugin}, {@code CollNetPlugin} and {@code NetPluginSource} providers
         * with {@link ServiceLoader} through this class loader (and the module layers it sees).
         */
        public Builder serviceLoader(ClassLoader loader) {
            this.serviceLoader = loader;
            this.useServiceLoader = true;
            return this;
        }

        /** @return the discovery result; never throws, problems are recorded instead */
        public NetPluginDiscovery build() {
            List<String> problems = new ArrayList<>();
            List<NetPluginSource> allSources = new ArrayList<>(sources);
            if (useServiceLoader) {
                allSources.addAll(loadAll(NetPluginSource.class, problems));
            }
            List<NetPlugin> net = new ArrayList<>(explicitNet);
            List<CollNetPlugin> collNet = new ArrayList<>(explicitCollNet);
            for (NetPluginSource source : allSources) {
                try {
                    net.addAll(source.netPlugins());
                    collNet.addAll(source.collNetPlugins());
                } catch (NetException | RuntimeException | LinkageError e) {
                    problems.add(source.description() + ": " + e);
                }
            }
            if (useServiceLoader) {
                net.addAll(loadAll(NetPlugin.class, problems));
                collNet.addAll(loadAll(CollNetPlugin.class, problems));
            }
            dropDuplicates(net, NetPlugin::name, problems);
            dropDuplicates(collNet, CollNetPlugin::name, problems);
            return new NetPluginDiscovery(net, collNet, problems);
        }

        private <T> List<T> loadAll(Class<T> type, List<String> problems) {
            List<T> found = new ArrayList<>();
            Iterator<T> it = ServiceLoader.load(type, serviceLoader).iterator();
            while (true) {
                try {
                    if (!it.hasNext()) {
                        break;
                    }
                    found.add(it.next());
                } catch (ServiceConfigurationError | LinkageError e) {
                    problems.add(type.getSimpleName() + " provider: " + e.getMessage());
                }
            }
            return found;
        }

        /** The same instance found twice (e.g. through two class loaders) is kept once. */
        private static <T> void dropDuplicates(List<T> plugins, Function<T, String> name, List<String> problems) {
            List<T> kept = new ArrayList<>();
            for (T p : plugins) {
                boolean sameClassAndName = kept.stream().anyMatch(k -> k.getClass() == p.getClass()
                        && name.apply(k).toLowerCase(Locale.ROOT).equals(name.apply(p).toLowerCase(Locale.ROOT)));
                if (sameClassAndName) {
                    problems.add("duplicate provider " + p.getClass().getName() + " ignored");
                } else {
                    kept.add(p);
                }
            }
            plugins.clear();
            plugins.addAll(kept);
        }
    }
}
