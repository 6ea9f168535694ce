package io.jccl.nativenet;

import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.config.Env;
import io.jccl.spi.discovery.NetPluginSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Native ncclNet plugins for {@link io.jccl.spi.discovery.NetPluginDiscovery}: the libraries that
 * {@code NCCL_NET_PLUGIN} names, read as NCCL reads it (spec 4.1), or libraries given explicitly
 * ({@link #of}, behind {@code jccl plugins --plugin PATH}).
 *
 * <p>Found with ServiceLoader, so that a JVM with this module sees the same native plugins NCCL
 * would load. With {@code NCCL_NET_PLUGIN} unset, {@code libnccl-net.so} is tried quietly, as NCCL
 * does; a library named explicitly that does not load is reported.
 */
public final class NativePluginSource implements NetPluginSource {
    private static final String DEFAULT_LIBRARY = "libnccl-net.so";

    private final List<String> entries;
    private final boolean implicit;
    private List<NativePluginLibrary> libraries;

    /** The source {@code NCCL_NET_PLUGIN} configures; for ServiceLoader. */
    public NativePluginSource() {
        String configured = Env.get(NativeHostConfig.NCCL_NET_PLUGIN);
        this.implicit = configured == null;
        this.entries = configured == null ? List.of(DEFAULT_LIBRARY) : parse(configured);
    }

    private NativePluginSource(List<String> entries) {
        this.entries = List.copyOf(entries);
        this.implicit = false;
    }

    /** @return a source of exactly these libraries (paths or NCCL_NET_PLUGIN-style names) */
    public static NativePluginSource of(List<String> entries) {
        return new NativePluginSource(entries);
    }

    /** NCCL's reading: a comma list; {@code none} (any case) means no external plugin. */
    static List<String> parse(String value) {
        if (value.trim().equalsIgnoreCase("none")) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (String part : value.split(",")) {
            String p = part.trim();
            if (!p.isEmpty()) {
                out.add(p);
            }
        }
        return out;
    }

    @Override
    public String description() {
        return "native plugins (" + (implicit ? NativeHostConfig.NCCL_NET_PLUGIN + " unset: " + DEFAULT_LIBRARY
                : String.join(",", entries)) + ")";
    }

    /** @return the libraries, opened once */
    public synchronized List<NativePluginLibrary> libraries() throws NetException {
        if (libraries == null) {
            List<NativePluginLibrary> opened = new ArrayList<>();
            List<String> failures = new ArrayList<>();
            for (String entry : entries) {
                try {
                    Optional<NativePluginLibrary> lib = NativePluginLibrary.openIfPresent(entry, !implicit);
                    lib.ifPresent(opened::add);
                } catch (NetException e) {
                    failures.add(e.getMessage());
                }
            }
            if (!failures.isEmpty()) {
                throw NetException.systemError(String.join("; ", failures) + (opened.isEmpty() ? ""
                        : " (loaded: " + String.join(", ", opened.stream().map(NativePluginLibrary::file).toList()) + ")"));
            }
            libraries = List.copyOf(opened);
        }
        return libraries;
    }

    @Override
    public List<NetPlugin> netPlugins() throws NetException {
        List<NetPlugin> out = new ArrayList<>();
        for (NativePluginLibrary lib : libraries()) {
            lib.netPlugin().ifPresent(out::add);
        }
        return out;
    }

    @Override
    public List<CollNetPlugin> collNetPlugins() throws NetException {
        List<CollNetPlugin> out = new ArrayList<>();
        for (NativePluginLibrary lib : libraries()) {
            lib.collNetPlugin().ifPresent(out::add);
        }
        return out;
    }

    @Override
    public String toString() {
        return description().toLowerCase(Locale.ROOT);
    }
}
