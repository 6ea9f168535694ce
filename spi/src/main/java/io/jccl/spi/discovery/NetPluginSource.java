package io.jccl.spi.discovery;

import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;

import java.util.List;

/**
 * A source of transports beyond the {@link NetPlugin} providers that {@link java.util.ServiceLoader}
 * instantiates directly: for example the native-plugin host, which turns every library named by
 * {@code NCCL_NET_PLUGIN} into a {@link NetPlugin}.
 *
 * <p>Register an implementation with ServiceLoader as {@code io.jccl.spi.discovery.NetPluginSource},
 * or add one with {@link NetPluginDiscovery.Builder#addSource}. Its transports are tried before the
 * ServiceLoader ones, as NCCL tries external plugins before its internal transports.
 */
public interface NetPluginSource {

    /** @return what this source provides, for listings and error messages */
    String description();

    /**
     * Creates this source's point-to-point transports, without initialising them.
     *
     * @return the transports, in the order they should be tried; empty if the source has none here
     * @throws NetException if the source is configured (e.g. a library is named) but cannot load it
     */
    List<NetPlugin> netPlugins() throws NetException;

    /**
     * Creates this source's CollNet transports, without initialising them.
     *
     * @return the transports; the default has none
     * @throws NetException if the source is configured but cannot load them
     */
    default List<CollNetPlugin> collNetPlugins() throws NetException {
        return List.of();
    }
}
