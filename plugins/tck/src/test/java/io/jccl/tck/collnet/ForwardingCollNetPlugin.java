package io.jccl.tck.collnet;

import io.jccl.spi.CollComm;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.DataType;
import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;

/** A CollNet transport that forwards every call to another: the base of the broken CollNet transports. */
public class ForwardingCollNetPlugin implements CollNetPlugin {
    protected final CollNetPlugin delegate;

    public ForwardingCollNetPlugin(CollNetPlugin delegate) {
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
    public CollComm connect(NetHandle[] handles, int rank, ListenComm listenComm) throws NetException {
        return delegate.connect(handles, rank, listenComm);
    }

    @Override
    public boolean reduceSupport(DataType dataType, ReduceOp op) throws NetException {
        return delegate.reduceSupport(dataType, op);
    }

    @Override
    public MemoryHandle regMr(CollComm comm, MemorySegment data, PointerType type) throws NetException {
        return delegate.regMr(comm, data, type);
    }

    @Override
    public void deregMr(CollComm comm, MemoryHandle mhandle) throws NetException {
        delegate.deregMr(comm, mhandle);
    }

    @Override
    public NetRequest iallreduce(CollComm comm, MemorySegment sendData, MemorySegment recvData, long count,
                                 DataType dataType, ReduceOp op, MemoryHandle sendMhandle, MemoryHandle recvMhandle)
            throws NetException {
        return delegate.iallreduce(comm, sendData, recvData, count, dataType, op, sendMhandle, recvMhandle);
    }

    @Override
    public NetRequest iflush(CollComm comm, MemorySegment data, MemoryHandle mhandle) throws NetException {
        return delegate.iflush(comm, data, mhandle);
    }

    @Override
    public boolean test(NetRequest request, int[] size) throws NetException {
        return delegate.test(request, size);
    }

    @Override
    public void closeColl(CollComm comm) throws NetException {
        delegate.closeColl(comm);
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
