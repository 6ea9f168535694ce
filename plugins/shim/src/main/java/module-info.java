/**
 * The Java half of the native shim libnccl-net.so: bridges NCCL's calls to a Java transport found
 * with {@link java.util.ServiceLoader}.
 */
module io.jccl.shim {
    requires transitive io.jccl.spi;
    // Only a training run of the AOT cache ends its recording through the JVM's diagnostic command.
    requires static java.management;

    exports io.jccl.shim;

    uses io.jccl.spi.NetPlugin;
    uses io.jccl.spi.CollNetPlugin;
}
