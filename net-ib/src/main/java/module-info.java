/**
 * JcclIB: NCCL's InfiniBand/RoCE transport design on libibverbs through Panama FFM.
 *
 * <p>Needs {@code --enable-native-access=io.jccl.net.ib} (or {@code ALL-UNNAMED} on the class path).
 */
module io.jccl.net.ib {
    requires transitive io.jccl.spi;
    requires jdk.net;

    exports io.jccl.net.ib;

    provides io.jccl.spi.NetPlugin with io.jccl.net.ib.IbNetPlugin;
}
