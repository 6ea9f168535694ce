package io.jccl.tck.run;

import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.discovery.NetPluginDiscovery;
import io.jccl.tck.CollNetPluginTck;

/**
 * The ncclCollNet rules against the transport named by the configuration parameter
 * {@link TckRunner#COLLNET_PARAMETER}, found by ServiceLoader discovery: what {@code jccl tck
 * --collnet} runs. Without the parameter every rule is skipped.
 */
public class DiscoveredCollNetPluginTck extends CollNetPluginTck {
    @Override
    protected CollNetPlugin createPlugin() throws NetException {
        String name = configurationParameter(TckRunner.COLLNET_PARAMETER);
        if (name == null) {
            return null;
        }
        NetPluginDiscovery found = NetPluginDiscovery.load();
        return found.findCollNet(name).orElseThrow(() -> NetException.invalidUsage("no CollNet transport named " + name
                + " on the class path; found: " + found.collNetPlugins().stream().map(CollNetPlugin::name).toList()));
    }
}
