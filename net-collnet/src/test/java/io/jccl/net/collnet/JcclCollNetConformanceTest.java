package io.jccl.net.collnet;

import io.jccl.spi.CollNetPlugin;
import io.jccl.tck.CollNetPluginTck;

/** The kit's CollNet rules against JcclCollNet, its aggregator a thread of rank 0 (the default). */
class JcclCollNetConformanceTest extends CollNetPluginTck {
    @Override
    protected CollNetPlugin createPlugin() {
        return new JcclCollNetPlugin();
    }
}
