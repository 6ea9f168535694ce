/**
 * JCCL's collective engine: communicators, the bootstrap, ring collectives, the proxy thread.
 * Transports come from the SPI at run time ({@code uses io.jccl.spi.NetPlugin}); the engine never
 * names one.
 */
module io.jccl.core {
    requires transitive io.jccl.spi;
    requires transitive io.jccl.cuda;
    // NCCL's topology XML (NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE)
    requires java.xml;
    // JFR events (io.jccl.core.observe)
    requires jdk.jfr;
    // the vectorised host kernel, used where the JVM has the module (HostKernels)
    requires static jdk.incubator.vector;

    exports io.jccl.core;
    exports io.jccl.core.config;
    exports io.jccl.core.check;
    exports io.jccl.core.kernel;
    exports io.jccl.core.topology;
    exports io.jccl.core.observe;

    uses io.jccl.spi.NetPlugin;
    uses io.jccl.spi.CollNetPlugin;
    uses io.jccl.spi.discovery.NetPluginSource;
}
