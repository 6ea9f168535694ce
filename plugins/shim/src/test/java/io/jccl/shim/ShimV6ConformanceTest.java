package io.jccl.shim;

import io.jccl.nativenet.NativeHostConfig;
import io.jccl.spi.NetPlugin;
import io.jccl.tck.NetPluginTck;
import io.jccl.tck.selftest.KitTestSettings;

/**
 * {@link ShimConformanceTest} at the oldest version the shim exports, ncclNet v6 (what NCCL 2.13
 * to 2.18 take): int sizes, v6 properties, no contexts.
 */
class ShimV6ConformanceTest extends NetPluginTck {
    static {
        System.setProperty(NativeHostConfig.NCCL_NET_PLUGIN, ShimLibrary.library().toString());
        KitTestSettings.apply();
    }

    @Override
    protected NetPlugin createPlugin() throws Exception {
        return ShimLibrary.net(6);
    }
}
