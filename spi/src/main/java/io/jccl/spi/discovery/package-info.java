/**
 * Finding transports: {@link io.jccl.spi.discovery.NetPluginDiscovery} collects them from
 * {@link java.util.ServiceLoader}, from {@link io.jccl.spi.discovery.NetPluginSource}s (such as the
 * native-plugin host) and from explicit additions, and selects one the way NCCL selects its network.
 */
package io.jccl.spi.discovery;
