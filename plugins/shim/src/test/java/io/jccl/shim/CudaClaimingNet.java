package io.jccl.shim;

import io.jccl.net.socket.SocketNetPlugin;
import io.jccl.spi.ForwardingNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.NetProperties;
import io.jccl.spi.PointerType;

/**
 * For {@link ShimGdrGateTest} only: JcclSocket under another name, its properties claiming CUDA
 * pointer support as JcclSocket's do on a machine with a GPU, so that the shim's decision whether
 * to pass that support on to NCCL can be checked on a machine without one. It moves host memory
 * only; every call but {@code name} and {@code getProperties} is JcclSocket's own.
 */
public final class CudaClaimingNet extends ForwardingNetPlugin {
    static final String NAME = "CudaClaimingTest";

    public CudaClaimingNet() {
        super(new SocketNetPlugin());
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public NetProperties getProperties(int dev) throws NetException {
        NetProperties p = delegate.getProperties(dev);
        return new NetProperties(p.name(), p.pciPath(), p.guid(), p.ptrSupport() | PointerType.CUDA.mask(),
                p.speedMbps(), p.port(), p.latencyUs(), p.maxComms(), p.maxRecvs(), p.regIsGlobal(), p.forceFlush(),
                p.maxP2pBytes(), p.maxCollBytes());
    }
}
