/**
 * ExampleUds: an example vendor transport over Unix domain sockets, found by JCCL with
 * {@link java.util.ServiceLoader} on the module path (and through META-INF/services on the class path).
 */
module com.example.uds {
    // transitive: the exported class's methods take and return the SPI's types.
    requires transitive io.jccl.spi;

    // Exported so that tools (the conformance kit's peer JVM) can create the provider by class name.
    exports com.example.uds;

    provides io.jccl.spi.NetPlugin with com.example.uds.ExampleUdsPlugin;
}
