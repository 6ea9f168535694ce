package io.jccl.tck.run;

import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.discovery.NetPluginDiscovery;
import io.jccl.tck.NetPluginTck;

/**
 * The ncclNet rules against the transport named by the configuration parameter
 * {@link TckRunner#NET_PARAMETER}, found by ServiceLoader discovery: what {@code jccl tck --net}
 * runs.
 */
public class DiscoveredNetPluginTck extends NetPluginTck {
    @Override
    protected NetPlugin createPlugin() throws NetException {
        String name = configurationParameter(TckRunner.NET_PARAMETER);
        if (name == null) {
            throw new IllegalStateException("set the configuration parameter " + TckRunner.NET_PARAMETER
                    + " to the name of the transport to check");
        }
        NetPluginDiscovery found = NetPluginDiscovery.load();
        return found.findNet(name).orElseThrow(() -> NetException.invalidUsage("no transport named " + name
                + " on the class path; found: " + found.netPlugins().stream().map(NetPlugin::name).toList()));
    }
}
