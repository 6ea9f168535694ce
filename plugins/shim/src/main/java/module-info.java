/**
 * The Java half of the native shim libnccl-net.so: bridges NCCL's calls to a Java transport found
 * with {@link java.util.ServiceLoader}.
 */
module io.jccl.shim {
    requires transitive io.jccl.spi;

    exports io.jccl.shim;

    uses io.jccl.spi.NetPlugin;
    uses io.jccl.spi.CollNetPlugin;
}
