package io.jccl.tck;

import io.jccl.net.socket.SocketNetPlugin;
import io.jccl.spi.NetPlugin;
import io.jccl.tck.selftest.KitTestSettings;

/**
 * Every rule of the kit against JcclSocket, the reference TCP transport: the run CI makes on every
 * build, with the full sizes (256 MiB) and JcclSocket's default configuration but for shorter
 * connect retries ({@link KitTestSettings}).
 */
class JcclSocketConformanceTest extends NetPluginTck {
    static {
        KitTestSettings.apply();
    }

    @Override
    protected NetPlugin createPlugin() {
        return new SocketNetPlugin();
    }
}
