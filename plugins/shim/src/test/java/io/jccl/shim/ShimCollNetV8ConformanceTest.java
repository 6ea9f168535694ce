package io.jccl.shim;

import io.jccl.spi.CollNetPlugin;
import io.jccl.tck.CollNetPluginTck;
import io.jccl.tck.selftest.KitTestSettings;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The CollNet rules through the round trip: the kit's LoopbackCollNet exported by the shim as
 * ncclCollNet v8 (JCCL_SHIM_COLLNET, set for this module's tests), loaded back through the native
 * host. v8 is where iallgather and ireducescatter were inserted before iflush, moving every later slot.
 */
class ShimCollNetV8ConformanceTest extends CollNetPluginTck {
    static {
        KitTestSettings.apply();
    }

    @Override
    protected CollNetPlugin createPlugin() throws Exception {
        var plugin = ShimLibrary.collNet(8);
        assertEquals(8, plugin.apiVersion().number());
        return plugin;
    }
}
