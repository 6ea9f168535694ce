package io.jccl.spi.discovery;

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
 * A transport for discovery tests only: its init outcome and device count are set by the test, and
 * it records init and close calls. It moves no data; every data-path call fails.
 */
public class ScriptedNetPlugin implements NetPlugin {
    private final String name;
    private final int devices;
    private final NetException initFailure;
    int initCalls;
    int closeCalls;

    public ScriptedNetPlugin(String name, int devices, NetException initFailure) {
        this.name = name;
        this.devices = devices;
        this.initFailure = initFailure;
    }

    /** @return how often {@link #init} was called */
    public int initCalls() {
        return initCalls;
    }

    /** @return how often {@link #close} was called */
    public int closeCalls() {
        return closeCalls;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void init(NetLogger logger) throws NetException {
        initCalls++;
        if (initFailure != null) {
            throw initFailure;
        }
    }

    @Override
    public int devices() {
        return devices;
    }

    @Override
    public NetProperties getProperties(int dev) throws NetException {
        if (dev < 0 || dev >= devices) {
            throw NetException.invalidArgument("no device " + dev);
        }
        return NetProperties.builder(name + dev).build();
    }

    private NetException noDataPath() {
        return NetException.internalError(name + " is a discovery-test transport and moves no data");
    }

    @Override
    public ListenComm listen(int dev, NetHandle handle) throws NetException {
        throw noDataPath();
    }

    @Override
    public SendComm connect(int dev, NetHandle handle) throws NetException {
        throw noDataPath();
    }

    @Override
    public RecvComm accept(ListenComm listenComm) throws NetException {
        throw noDataPath();
    }

    @Override
    public MemoryHandle regMr(NetComm comm, MemorySegment data, PointerType type) throws NetException {
        throw noDataPath();
    }

    @Override
    public void deregMr(NetComm comm, MemoryHandle mhandle) throws NetException {
        throw noDataPath();
    }

    @Override
    public NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mhandle) throws NetException {
        throw noDataPath();
    }

    @Override
    public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
            throws NetException {
        throw noDataPath();
    }

    @Override
    public NetRequest iflush(RecvComm comm, int n, MemorySegment[] data, MemoryHandle[] mhandles)
            throws NetException {
        throw noDataPath();
    }

    @Override
    public boolean test(NetRequest request, int[] sizes) throws NetException {
        throw noDataPath();
    }

    @Override
    public void closeSend(SendComm comm) throws NetException {
        throw noDataPath();
    }

    @Override
    public void closeRecv(RecvComm comm) throws NetException {
        throw noDataPath();
    }

    @Override
    public void closeListen(ListenComm comm) throws NetException {
        throw noDataPath();
    }

    @Override
    public void close() {
        closeCalls++;
    }

    /** Registered in META-INF/services: found by ServiceLoader on the class path. */
    public static final class ServiceLoaded extends ScriptedNetPlugin {
        public ServiceLoaded() {
            super("ServiceLoadedNet", 2, null);
        }
    }

    /** Registered in META-INF/services: its constructor fails, as a misbuilt vendor jar's might. */
    public static final class FailsToConstruct extends ScriptedNetPlugin {
        public FailsToConstruct() {
            super("never", 0, null);
            throw new IllegalStateException("vendor library missing");
        }
    }
}
