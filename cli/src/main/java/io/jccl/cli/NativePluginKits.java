package io.jccl.cli;

import io.jccl.nativenet.NativePluginLibrary;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.tck.CollNetPluginTck;
import io.jccl.tck.NetPluginTck;

/**
 * The conformance kit against a native plugin library, loaded through the native-plugin host: what
 * {@code jccl tck --native PATH} runs. The library comes from the configuration parameter
 * {@link #LIBRARY_PARAMETER}; the kit's peer JVM (rule fault.2) finds the same plugin by name
 * through {@code NCCL_NET_PLUGIN}, which {@code jccl tck} hands it.
 */
final class NativePluginKits {
    /** The configuration parameter that names the plugin library. */
    static final String LIBRARY_PARAMETER = "jccl.tck.native";

    private NativePluginKits() {
    }

    static NativePluginLibrary library(String path) throws NetException {
        if (path == null) {
            throw new IllegalStateException("set the configuration parameter " + LIBRARY_PARAMETER
                    + " to the plugin library to check");
        }
        return NativePluginLibrary.open(path);
    }

    /** The ncclNet rules against the library's {@code ncclNetPlugin_vN}. */
    public static class Net extends NetPluginTck {
        @Override
        protected NetPlugin createPlugin() throws NetException {
            NativePluginLibrary lib = library(configurationParameter(LIBRARY_PARAMETER));
            return lib.netPlugin().<NetPlugin>map(p -> p).orElseThrow(() -> NetException.invalidUsage(lib.file()
                    + " exports no ncclNetPlugin_v6..v12"));
        }
    }

    /** The ncclCollNet rules against the library's {@code ncclCollNetPlugin_vN}; skipped if it has none. */
    public static class CollNet extends CollNetPluginTck {
        @Override
        protected CollNetPlugin createPlugin() throws NetException {
            NativePluginLibrary lib = library(configurationParameter(LIBRARY_PARAMETER));
            return lib.collNetPlugin().<CollNetPlugin>map(p -> p).orElse(null);
        }
    }
}
