package io.jccl.spi;

import java.lang.foreign.MemorySegment;

/**
 * A transport that forwards every call to another, for wrapping one: override the calls to observe
 * or change (tracing, fault injection). The conformance kit's deliberately broken transports and
 * core's tests of how the engine meets a transport's behaviour are built on it.
 */
public class ForwardingNetPlugin implements NetPlugin {
    protected final NetPlugin delegate;

    public ForwardingNetPlugin(NetPlugin delegate) {
        this.delegate = delegate;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public void init(NetLogger logger) throws NetException {
        delegate.init(logger);
    }

    @Override
    public int devices() throws NetException {
        return delegate.devices();
    }

    @Override
    public NetProperties getProperties(int dev) throws NetException {
        return delegate.getProperties(dev);
    }

    @Override
    public ListenComm listen(int dev, NetHandle handle) throws NetException {
        return delegate.listen(dev, handle);
    }

    @Override
    public SendComm connect(int dev, NetHandle handle) throws NetException {
        return delegate.connect(dev, handle);
    }

    @Override
    public RecvComm accept(ListenComm listenComm) throws NetException {
        return delegate.accept(listenComm);
    }

    @Override
    public MemoryHandle regMr(NetComm comm, MemorySegment data, PointerType type) throws NetException {
        return delegate.regMr(comm, data, type);
    }

    @Override
    public MemoryHandle regMrDmaBuf(NetComm comm, MemorySegment data, PointerType type, long offset, int fd)
            throws NetException {
        return delegate.regMrDmaBuf(comm, data, type, offset, fd);
    }

    @Override
    public void deregMr(NetComm comm, MemoryHandle mhandle) throws NetException {
        delegate.deregMr(comm, mhandle);
    }

    @Override
    public NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mhandle) throws NetException {
        return delegate.isend(comm, data, tag, mhandle);
    }

    @Override
    public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
            throws NetException {
        return delegate.irecv(comm, n, data, tags, mhandles);
    }

    @Override
    public NetRequest iflush(RecvComm comm, int n, MemorySegment[] data, MemoryHandle[] mhandles) throws NetException {
        return delegate.iflush(comm, n, data, mhandles);
    }

    @Override
    public boolean test(NetRequest request, int[] sizes) throws NetException {
        return delegate.test(request, sizes);
    }

    @Override
    public void closeSend(SendComm comm) throws NetException {
        delegate.closeSend(comm);
    }

    @Override
    public void closeRecv(RecvComm comm) throws NetException {
        delegate.closeRecv(comm);
    }

    @Override
    public void closeListen(ListenComm comm) throws NetException {
        delegate.closeListen(comm);
    }

    @Override
    public void close() throws NetException {
        delegate.close();
    }
}
