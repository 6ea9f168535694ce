package io.jccl.shim;

import io.jccl.nativenet.NativeHostConfig;
import io.jccl.spi.NetPlugin;
import io.jccl.tck.NetPluginTck;
import io.jccl.tck.selftest.KitTestSettings;

/**
 * The conformance kit through the round trip: JcclSocket exported by the shim as ncclNet v12,
 * loaded back through the native host, must pass what JcclSocket passes directly. The kit's peer
 * JVM (rule fault.2) loads the same library through {@code NCCL_NET_PLUGIN}.
 *
 * <p>If a rule fails here and not against JcclSocket itself ({@code jccl tck --net JcclSocket}), the
 * bridge is at fault; {@code jccl tck --native PATH} runs the same check by hand.
 */
class ShimConformanceTest extends NetPluginTck {
    static {
        System.setProperty(NativeHostConfig.NCCL_NET_PLUGIN, ShimLibrary.library().toString());
        KitTestSettings.apply();
    }

    @Override
    protected NetPlugin createPlugin() throws Exception {
        return ShimLibrary.net(12);
    }
}
