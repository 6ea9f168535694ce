package io.jccl.spi.discovery;

import io.jccl.spi.NetPlugin;

import java.util.List;

/**
 * The transport chosen by {@link NetPluginDiscovery#selectNet}: initialised and ready to use.
 *
 * @param plugin  the transport, on which {@code init} succeeded
 * @param devices its number of devices, at least 1
 * @param skipped why each transport tried before it was not chosen, in order
 */
public record NetSelection(NetPlugin plugin, int devices, List<String> skipped) {
    public NetSelection {
        skipped = List.copyOf(skipped);
    }
}
