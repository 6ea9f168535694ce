package io.jccl.nativenet;

import io.jccl.spi.NetApiVersion;
import io.jccl.spi.NetException;

import java.util.Optional;

/**
 * A native ncclNet plugin library, opened as NCCL opens it (spec 4.1, 4.2): {@code dlopen(entry,
 * RTLD_NOW | RTLD_LOCAL)}, then {@code libnccl-net-<entry>.so} for a bare name, and the newest
 * {@code ncclNetPlugin_vN} and {@code ncclCollNetPlugin_vN} symbols from v12 down to v6, each looked
 * up on its own.
 *
 * <p>A library stays loaded for the life of the JVM (as with {@code NCCL_NET_PLUGIN_REF_COUNT=1}):
 * plugins that start threads are not safe to unload.
 */
public final class NativePluginLibrary {
    private final String entry;
    private final String file;
    private final NetApiVersion netVersion;
    private final long netTable;
    private final NetApiVersion collNetVersion;
    private final long collNetTable;

    private NativePluginLibrary(String entry, String file, NetApiVersion netVersion, long netTable,
                                NetApiVersion collNetVersion, long collNetTable) {
        this.entry = entry;
        this.file = file;
        this.netVersion = netVersion;
        this.netTable = netTable;
        this.collNetVersion = collNetVersion;
        this.collNetTable = collNetTable;
    }

    /**
     * Opens a plugin library by NCCL's rules.
     *
     * @param entry an {@code NCCL_NET_PLUGIN} entry: a path, a file name, or a bare name such as
     *              {@code aws-ofi} for {@code libnccl-net-aws-ofi.so}
     * @return the library
     * @throws NetException {@code ncclSystemError} with dlerror's message if it does not load;
     *                      {@code ncclInvalidUsage} if it exports no ncclNet or ncclCollNet symbol of
     *                      v6 to v12
     */
    public static NativePluginLibrary open(String entry) throws NetException {
        Optional<NativePluginLibrary> lib = openIfPresent(entry, true);
        return lib.orElseThrow();
    }

    /**
     * @return the library, or empty if no file of that name exists (NCCL's quiet "Could not find")
     * @throws NetException if a file exists but does not load or is not an ncclNet plugin
     */
    static Optional<NativePluginLibrary> openIfPresent(String entry, boolean required) throws NetException {
        Dl.Opened first = Dl.open(entry, Dl.RTLD_NOW | Dl.RTLD_LOCAL);
        Dl.Opened opened = first;
        String name = entry;
        boolean bare = !entry.contains("/") && !(entry.startsWith("lib") && entry.endsWith(".so"));
        if (first.handle() == 0 && bare) {
            name = "libnccl-net-" + entry + ".so";
            opened = Dl.open(name, Dl.RTLD_NOW | Dl.RTLD_LOCAL);
        }
        if (opened.handle() == 0) {
            boolean missing = first.notFound() && (!bare || opened.notFound());
            if (missing && !required) {
                return Optional.empty();
            }
            throw NetException.systemError("cannot load native plugin " + entry + ": " + first.error()
                    + (bare ? "; then " + name + ": " + opened.error() : ""));
        }
        NetApiVersion netVersion = null;
        long netTable = 0;
        NetApiVersion collVersion = null;
        long collTable = 0;
        for (int v = NetApiVersion.newest().number(); v >= NetApiVersion.V6.number(); v--) {
            NetApiVersion version = NetApiVersion.of(v);
            if (netTable == 0) {
                netTable = Dl.symbol(opened.handle(), version.netSymbol());
                netVersion = netTable == 0 ? null : version;
            }
            if (collTable == 0) {
                collTable = Dl.symbol(opened.handle(), version.collNetSymbol());
                collVersion = collTable == 0 ? null : version;
            }
        }
        if (netTable == 0 && collTable == 0) {
            throw NetException.invalidUsage(name + " exports no ncclNetPlugin_v6..v12 nor ncclCollNetPlugin_v6..v12 "
                    + "symbol: it is not an NCCL net plugin, or one older than v6 (NCCL 2.13)");
        }
        String file = Dl.fileOf(netTable != 0 ? netTable : collTable);
        return Optional.of(new NativePluginLibrary(entry, file == null ? name : file, netVersion, netTable,
                collVersion, collTable));
    }

    /** @return the name this library was asked for, e.g. an {@code NCCL_NET_PLUGIN} entry */
    public String entry() {
        return entry;
    }

    /** @return the file that was loaded */
    public String file() {
        return file;
    }

    /** @return the newest ncclNet version the library exports, if any */
    public Optional<NetApiVersion> netVersion() {
        return Optional.ofNullable(netVersion);
    }

    /** @return the newest ncclCollNet version the library exports, if any */
    public Optional<NetApiVersion> collNetVersion() {
        return Optional.ofNullable(collNetVersion);
    }

    /** @return the library's ncclNet as a {@link io.jccl.spi.NetPlugin}, if it exports one; not yet initialised */
    public Optional<NativeNetPlugin> netPlugin() {
        return netTable == 0 ? Optional.empty() : Optional.of(new NativeNetPlugin(this, netVersion, netTable));
    }

    /** @return the library's ncclCollNet as a {@link io.jccl.spi.CollNetPlugin}, if it exports one */
    public Optional<NativeCollNetPlugin> collNetPlugin() {
        return collNetTable == 0 ? Optional.empty()
                : Optional.of(new NativeCollNetPlugin(this, collNetVersion, collNetTable));
    }

    @Override
    public String toString() {
        return file + " (ncclNet " + (netVersion == null ? "none" : "v" + netVersion.number()) + ", ncclCollNet "
                + (collNetVersion == null ? "none" : "v" + collNetVersion.number()) + ")";
    }
}
