package io.jccl.shim;

import io.jccl.spi.CollNetPlugin;
import io.jccl.tck.CollNetPluginTck;
import io.jccl.tck.selftest.KitTestSettings;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The CollNet rules through the round trip: the kit's LoopbackCollNet exported by the shim as
 * ncclCollNet v12 (JCCL_SHIM_COLLNET, set for this module's tests), loaded back through the native
 * host.
 */
class ShimCollNetV12ConformanceTest extends CollNetPluginTck {
    static {
        KitTestSettings.apply();
    }

    @Override
    protected CollNetPlugin createPlugin() throws Exception {
        var plugin = ShimLibrary.collNet(12);
        assertEquals(12, plugin.apiVersion().number());
        return plugin;
    }
}
