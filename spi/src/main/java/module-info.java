/**
 * The JCCL service-provider interface: NCCL's {@code ncclNet_v6} and {@code ncclCollNet_v6} plugin
 * contracts in Java, the value types that cross the C ABI unchanged, and transport discovery.
 *
 * <p>Depends on {@code java.base} only, so that a transport, the conformance kit and the native shim
 * can all build on it without pulling in anything else.
 */
module io.jccl.spi {
    exports io.jccl.spi;
    exports io.jccl.spi.config;
    exports io.jccl.spi.discovery;
    exports io.jccl.spi.log;

    uses io.jccl.spi.NetPlugin;
    uses io.jccl.spi.CollNetPlugin;
    uses io.jccl.spi.discovery.NetPluginSource;
}
