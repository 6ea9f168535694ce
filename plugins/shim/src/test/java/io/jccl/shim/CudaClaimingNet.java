package io.jccl.shim;

import io.jccl.net.socket.SocketNetPlugin;
import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.lang.foreign.MemorySegment;

/**
 * For {@link ShimGdrGateTest} only: JcclSocket under another name, its properties claiming CUDA
 * pointer support as JcclSocket's do on a machine with a GPU, so that the shim's decision whether
 * to pass that support on to NCCL can be checked on a machine without one. It moves host memory
 * only; every call but {@code getProperties} is JcclSocket's own.
 */
public final class CudaClaimingNet implements NetPlugin {
    static final String NAME = "CudaClaimingTest";
    private final SocketNetPlugin socket = new SocketNetPlugin();

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void init(NetLogger logger) throws NetException {
        socket.init(logger);
    }

    @Override
    public int devices() throws NetException {
        return socket.devices();
    }

    @Override
    public NetProperties getProperties(int dev) throws NetException {
        NetProperties p = socket.getProperties(dev);
        return new NetProperties(p.name(), p.pciPath(), p.guid(), p.ptrSupport() | PointerType.CUDA.mask(),
                p.speedMbps(), p.port(), p.latencyUs(), p.maxComms(), p.maxRecvs(), p.regIsGlobal(), p.forceFlush(),
                p.maxP2pBytes(), p.maxCollBytes());
    }

    @Override
    public ListenComm listen(int dev, NetHandle handle) throws NetException {
        return socket.listen(dev, handle);
    }

    @Override
    public SendComm connect(int dev, NetHandle handle) throws NetException {
        return socket.connect(dev, handle);
    }

    @Override
    public RecvComm accept(ListenComm listenComm) throws NetException {
        return socket.accept(listenComm);
    }

    @Override
    public MemoryHandle regMr(NetComm comm, MemorySegment data, PointerType type) throws NetException {
        return socket.regMr(comm, data, type);
    }

    @Override
    public void deregMr(NetComm comm, MemoryHandle mhandle) throws NetException {
        socket.deregMr(comm, mhandle);
    }

    @Override
    public NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mhandle) throws NetException {
        return socket.isend(comm, data, tag, mhandle);
    }

    @Override
    public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
            throws NetException {
        return socket.irecv(comm, n, data, tags, mhandles);
    }

    @Override
    public NetRequest iflush(RecvComm comm, int n, MemorySegment[] data, MemoryHandle[] mhandles) throws NetException {
        return socket.iflush(comm, n, data, mhandles);
    }

    @Override
    public boolean test(NetRequest request, int[] sizes) throws NetException {
        return socket.test(request, sizes);
    }

    @Override
    public void closeSend(SendComm comm) throws NetException {
        socket.closeSend(comm);
    }

    @Override
    public void closeRecv(RecvComm comm) throws NetException {
        socket.closeRecv(comm);
    }

    @Override
    public void closeListen(ListenComm comm) throws NetException {
        socket.closeListen(comm);
    }

    @Override
    public void close() throws NetException {
        socket.close();
    }
}
