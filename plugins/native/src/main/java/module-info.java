/**
 * The native-plugin host: loads ncclNet / ncclCollNet plugin libraries into Java through FFM, and
 * lists those of NCCL_NET_PLUGIN in transport discovery.
 */
module io.jccl.nativenet {
    requires transitive io.jccl.spi;

    exports io.jccl.nativenet;

    provides io.jccl.spi.discovery.NetPluginSource with io.jccl.nativenet.NativePluginSource;
}
