/**
 * JcclCollNet, in-network reduction in software: an {@link io.jccl.spi.CollNetPlugin} found with
 * {@link java.util.ServiceLoader}, and the aggregation service that plays the switch.
 */
module io.jccl.net.collnet {
    requires io.jccl.spi;

    exports io.jccl.net.collnet;

    provides io.jccl.spi.CollNetPlugin with io.jccl.net.collnet.JcclCollNetPlugin;
}
