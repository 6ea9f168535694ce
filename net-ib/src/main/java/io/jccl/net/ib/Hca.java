package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;
import io.jccl.net.ib.verbs.IbvLayouts;
import io.jccl.net.ib.verbs.Verbs;
import io.jccl.net.ib.verbs.VerbsException;
import io.jccl.net.ib.verbs.VerbsOps;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetResult;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * An opened RDMA device (host channel adapter): its verbs context, one protection domain shared by
 * all its ports and comms, the registration cache on that domain, and the thread that reads its
 * asynchronous events.
 *
 * <p>The async-event thread (NCCL's {@code ncclIbAsyncThreadMain}) maps each event to the comm that
 * owns the queue pair or completion queue it names. Fatal events fail that comm, so every pending
 * request of it fails at its next {@code test}; {@code IBV_EVENT_DEVICE_FATAL} fails every comm of
 * the device. Other events are logged.
 */
final class Hca implements AutoCloseable {
    private static final int POLL_INTERVAL_MS = 100;

    final String name;
    final MemorySegment context;
    final MemorySegment pd;
    final VerbsOps.Functions ops;
    final long guid;
    final int maxQp;
    final int maxQpWr;
    final int maxCqe;
    final int portCount;
    final String pciPath;
    final RegistrationCache registrations;

    private final NetLogger logger;
    private final Map<Long, IbComm> owners = new ConcurrentHashMap<>();
    private final Thread asyncThread;
    private volatile boolean running = true;
    private volatile String fatal;

    private Hca(String name, MemorySegment context, MemorySegment pd, MemorySegment attr, NetLogger logger) {
        this.name = name;
        this.context = context;
        this.pd = pd;
        this.ops = VerbsOps.functions(context);
        this.guid = Long.reverseBytes(attr.get(JAVA_LONG, IbvLayouts.DeviceAttr.SYS_IMAGE_GUID));
        this.maxQp = attr.get(JAVA_INT, IbvLayouts.DeviceAttr.MAX_QP);
        this.maxQpWr = attr.get(JAVA_INT, IbvLayouts.DeviceAttr.MAX_QP_WR);
        this.maxCqe = attr.get(JAVA_INT, IbvLayouts.DeviceAttr.MAX_CQE);
        this.portCount = attr.get(JAVA_BYTE, IbvLayouts.DeviceAttr.PHYS_PORT_CNT) & 0xff;
        this.pciPath = pciPath(name);
        this.logger = logger;
        this.registrations = new RegistrationCache(new RegistrationCache.Registrar() {
            @Override
            public RegistrationCache.Registration register(long address, long length) throws VerbsException {
                MemorySegment mr = Verbs.regMr(pd, address, length, Ibv.ACCESS_LOCAL_WRITE | Ibv.ACCESS_REMOTE_WRITE
                        | Ibv.ACCESS_REMOTE_READ);
                return new RegistrationCache.Registration(mr.address(), address, length,
                        mr.get(JAVA_INT, IbvLayouts.Mr.LKEY), mr.get(JAVA_INT, IbvLayouts.Mr.RKEY));
            }

            @Override
            public void release(RegistrationCache.Registration r) throws VerbsException {
                Verbs.deregMr(MemorySegment.ofAddress(r.mr));
            }
        });
        this.asyncThread = Thread.ofPlatform().daemon().name("JcclIB async " + name).unstarted(this::readAsyncEvents);
    }

    /**
     * Opens a device, allocates its protection domain and starts its async-event thread.
     *
     * @throws VerbsException if the device cannot be opened
     */
    static Hca open(MemorySegment device, String name, NetLogger logger) throws VerbsException {
        MemorySegment context = Verbs.openDevice(device, name);
        MemorySegment pd = null;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IbvLayouts.DeviceAttr.LAYOUT);
            Verbs.queryDevice(context, attr);
            Verbs.setNonBlocking(context.get(JAVA_INT, IbvLayouts.Context.ASYNC_FD));
            pd = Verbs.allocPd(context);
            Hca hca = new Hca(name, context, pd, attr, logger);
            hca.asyncThread.start();
            return hca;
        } catch (VerbsException | RuntimeException e) {
            try {
                if (pd != null) {
                    Verbs.deallocPd(pd);
                }
                Verbs.closeDevice(context);
            } catch (VerbsException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** The realpath of the device's PCI function with the function digit set to 0, as NCCL reports it. */
    private static String pciPath(String name) {
        Path link = Path.of("/sys/class/infiniband", name, "device");
        try {
            if (!Files.exists(link)) {
                return null;
            }
            String real = link.toRealPath().toString();
            return real.isEmpty() ? null : real.substring(0, real.length() - 1) + "0";
        } catch (Exception e) {
            return null;
        }
    }

    /** Routes async events about a queue pair or completion queue (by address) to its comm. */
    void own(MemorySegment resource, IbComm comm) {
        owners.put(resource.address(), comm);
    }

    void disown(MemorySegment resource) {
        owners.remove(resource.address());
    }

    /** @throws NetException if a fatal event has made the device unusable */
    void checkUsable() throws NetException {
        String f = fatal;
        if (f != null) {
            throw new NetException(NetResult.SYSTEM_ERROR, name + " reported a fatal error (" + f
                    + "); restart the process once the device is back");
        }
    }

    private void readAsyncEvents() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment event = arena.allocate(IbvLayouts.AsyncEvent.LAYOUT);
            MemorySegment pollFd = arena.allocate(IbvLayouts.PollFd.LAYOUT);
            MemorySegment state = Verbs.allocateCallState(arena);
            int fd = context.get(JAVA_INT, IbvLayouts.Context.ASYNC_FD);
            while (running) {
                if (!Verbs.pollReadable(fd, POLL_INTERVAL_MS, pollFd, state)) {
                    continue;
                }
                while (running && Verbs.getAsyncEvent(context, event, state)) {
                    try {
                        dispatch(event.get(JAVA_INT, IbvLayouts.AsyncEvent.EVENT_TYPE),
                                event.get(ADDRESS, IbvLayouts.AsyncEvent.ELEMENT).address(),
                                event.get(JAVA_INT, IbvLayouts.AsyncEvent.ELEMENT_PORT_NUM));
                    } finally {
                        Verbs.ackAsyncEvent(event);
                    }
                }
            }
        } catch (VerbsException | RuntimeException e) {
            if (running) {
                logger.warn("NET/JcclIB : %s: async event thread stopped: %s", name, e.getMessage());
            }
        }
    }

    /** Acts on one async event: package-private so that its routing can be checked without a device fault. */
    void dispatch(int type, long element, int portNum) {
        String what = Verbs.eventTypeString(type);
        switch (type) {
            case Ibv.EVENT_CQ_ERR, Ibv.EVENT_QP_FATAL, Ibv.EVENT_QP_REQ_ERR, Ibv.EVENT_QP_ACCESS_ERR,
                 Ibv.EVENT_PATH_MIG_ERR, Ibv.EVENT_WQ_FATAL -> {
                IbComm comm = owners.get(element);
                logger.warn("NET/JcclIB : %s: async event %s on %s 0x%x%s", name, what,
                        type == Ibv.EVENT_CQ_ERR ? "CQ" : "QP", element, comm == null ? " (no open comm)" : "");
                if (comm != null) {
                    NetResult result = type == Ibv.EVENT_QP_REQ_ERR || type == Ibv.EVENT_QP_ACCESS_ERR
                            ? NetResult.REMOTE_ERROR : NetResult.SYSTEM_ERROR;
                    comm.fail(new NetException(result, name + ": asynchronous event '" + what + "'"
                            + (result == NetResult.REMOTE_ERROR ? ": the peer sent an invalid request or accessed "
                            + "memory it may not (check the registrations on both sides)" : "")));
                }
            }
            case Ibv.EVENT_DEVICE_FATAL -> {
                fatal = what;
                logger.warn("NET/JcclIB : %s: async event %s: failing every comm of the device", name, what);
                List<IbComm> comms = new ArrayList<>(owners.values());
                for (IbComm comm : comms) {
                    comm.fail(new NetException(NetResult.SYSTEM_ERROR, name + ": asynchronous event '" + what
                            + "': the device is unusable"));
                }
            }
            case Ibv.EVENT_PORT_ERR -> logger.warn("NET/JcclIB : %s: port %d went down (%s)", name, portNum, what);
            default -> logger.info(LogSubsystem.NET, "NET/JcclIB : %s: async event %s", name, what);
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            asyncThread.join(5L * POLL_INTERVAL_MS + 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        registrations.clear();
        try {
            Verbs.deallocPd(pd);
        } catch (VerbsException e) {
            logger.warn("NET/JcclIB : %s: %s", name, e.getMessage());
        }
        try {
            Verbs.closeDevice(context);
        } catch (VerbsException e) {
            logger.warn("NET/JcclIB : %s: %s", name, e.getMessage());
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
