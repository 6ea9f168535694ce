/**
 * JcclSocket, the TCP transport: an {@link io.jccl.spi.NetPlugin} found with
 * {@link java.util.ServiceLoader}.
 */
module io.jccl.net.socket {
    requires io.jccl.spi;
    // Device memory (ptrSupport CUDA): copies between a GPU and pinned host mirrors. Optional: without
    // the binding (a package of this jar alone) JcclSocket moves host memory only.
    requires static io.jccl.cuda;
    // Only to size TCP keep-alive to the failure bound; a runtime without it (jlink) falls back to SO_KEEPALIVE.
    requires static jdk.net;

    exports io.jccl.net.socket;

    provides io.jccl.spi.NetPlugin with io.jccl.net.socket.SocketNetPlugin;
}
