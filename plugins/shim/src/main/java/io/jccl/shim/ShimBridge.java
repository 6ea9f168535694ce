package io.jccl.shim;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

import static io.jccl.shim.ShimAbi.LONG;
import static io.jccl.shim.ShimAbi.MEMORY;
import static io.jccl.shim.ShimAbi.SERVICES;
import static io.jccl.shim.ShimAbi.offset;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The one entry point of the Java half that the C half calls through JNI, once per loaded shim
 * library: {@link #bootstrap} creates an FFM upcall stub for every ncclNet and ncclCollNet operation
 * and writes their addresses into the C half's operation tables. From then on NCCL's calls reach
 * {@link NetBridge} and {@link CollNetBridge} through those stubs alone.
 */
@SuppressWarnings("restricted") // FFM by design: native memory and calls are this class's job
public final class ShimBridge {
    /** JcclSocket's bound on all connections' I/O threads (its SocketConfig.JCCL_SOCKET_IO_THREADS). */
    static final String SOCKET_IO_THREADS = "JCCL_SOCKET_IO_THREADS";
    /** JcclSocket's cap on the automatic layout's I/O threads per connection (its SocketConfig.JCCL_SOCKET_AUTO_THREADS_MAX). */
    static final String SOCKET_AUTO_THREADS_MAX = "JCCL_SOCKET_AUTO_THREADS_MAX";
    /** JcclSocket's wait before a caller moves a starved I/O thread's bytes (its SocketConfig.JCCL_SOCKET_HELP_US). */
    static final String SOCKET_HELP_US = "JCCL_SOCKET_HELP_US";
    /** Set (to the library's path) only in a JVM that the shim's C half started itself. */
    static final String LIBRARY_PROPERTY = "jccl.shim.library";

    private ShimBridge() {
    }

    /**
     * Installs the Java half. Called by {@code libnccl-net.so} on the first {@code init}, on a thread
     * attached to this JVM.
     *
     * @param services address of the C half's {@code jccl_services}
     * @return {@code null} on success, else why the shim cannot run (the C half logs it as a WARN)
     */
    public static String bootstrap(long services) {
        try {
            MemorySegment s = MEMORY.asSlice(services, SERVICES.byteSize());
            int abi = s.get(JAVA_INT, offset(SERVICES, "abiVersion"));
            int netOps = s.get(JAVA_INT, offset(SERVICES, "netOpCount"));
            int collNetOps = s.get(JAVA_INT, offset(SERVICES, "collNetOpCount"));
            if (abi != ShimAbi.VERSION || netOps != ShimAbi.NetOp.values().length
                    || collNetOps != ShimAbi.CollNetOp.values().length) {
                return "the shim library (ABI " + abi + ", " + netOps + "/" + collNetOps + " operations) does not match "
                        + "the io.jccl.shim classes (ABI " + ShimAbi.VERSION + ", " + ShimAbi.NetOp.values().length + "/"
                        + ShimAbi.CollNetOp.values().length + "): use the library and the jars of one JCCL build";
            }
            String missing = RuntimeModules.problem("the shim (io.jccl.shim, io.jccl.spi)", ShimBridge.class,
                    io.jccl.spi.NetPlugin.class);
            if (missing != null) {
                return missing;
            }
            if (AotTraining.output() != null) {
                String problem = AotTraining.problem();
                String training = problem != null ? problem : AotTraining.begin();
                if (training != null) {
                    return training;
                }
            }
            keepThreadsPerConnection();
            String netName = ShimAbi.string(s.get(JAVA_LONG, offset(SERVICES, "netName")));
            String collNetName = ShimAbi.string(s.get(JAVA_LONG, offset(SERVICES, "collNetName")));
            ShimLogger logger = new ShimLogger(s.get(JAVA_LONG, offset(SERVICES, "log")));
            ClassLoader loader = ShimBridge.class.getClassLoader();
            NetBridge net = new NetBridge(netName, logger, loader);
            CollNetBridge collNet = new CollNetBridge(collNetName == null ? "" : collNetName, logger, loader);
            long netTable = s.get(JAVA_LONG, offset(SERVICES, "netOps"));
            long collNetTable = s.get(JAVA_LONG, offset(SERVICES, "collNetOps"));
            Map<ShimAbi.NetOp, MemorySegment> netStubs = new EnumMap<>(ShimAbi.NetOp.class);
            for (ShimAbi.NetOp op : ShimAbi.NetOp.values()) {
                netStubs.put(op, install(net, NetBridge.class, op.name(), op.descriptor, netTable + 8L * op.ordinal()));
            }
            net.entryPoints(netStubs);
            for (ShimAbi.CollNetOp op : ShimAbi.CollNetOp.values()) {
                install(collNet, CollNetBridge.class, op.name(), op.descriptor, collNetTable + 8L * op.ordinal());
            }
            return null;
        } catch (Throwable e) {
            return "the Java half of the shim failed to start: " + e;
        }
    }

    /**
     * NCCL gives each connection NCCL_SOCKET_NTHREADS threads; JcclSocket's process-wide bound on
     * them (for JCCL's own engine, whose rings open many connections per rank) cost NCCL a fifth of
     * its all_reduce busbw with 8 channels (H200, 512 MiB: 10.1 against 12.7 GB/s), so under NCCL it
     * is off unless the user set it; and the automatic layout gives each connection one I/O thread
     * (below). Other transports do not read the names.
     */
    static void keepThreadsPerConnection() {
        if (io.jccl.spi.config.Env.get(SOCKET_IO_THREADS) == null) {
            System.setProperty(SOCKET_IO_THREADS, "0");
        }
        // Nor does NCCL's one proxy thread move stream bytes for a starved I/O thread: with 8
        // channels (64 I/O threads a rank on 16 cores) it took that work often enough to cost all_reduce
        // a sixth of its busbw from 128 MiB (H200: 8.8-9.1 against 10.2-10.4 GB/s without).
        if (io.jccl.spi.config.Env.get(SOCKET_HELP_US) == null) {
            System.setProperty(SOCKET_HELP_US, "0");
        }
        // NCCL opens a connection per channel and direction: with 8 channels and 4 threads each on
        // 16 cores, a rank's 64 I/O threads each saw every fourth message and were parked by then
        // (measurements: SocketConfig.JCCL_SOCKET_AUTO_THREADS_MAX).
        if (io.jccl.spi.config.Env.get(SOCKET_AUTO_THREADS_MAX) == null) {
            System.setProperty(SOCKET_AUTO_THREADS_MAX, "1");
        }
    }

    /** @return the upcall stub now at {@code slot} of the C half's table */
    private static MemorySegment install(Object bridge, Class<?> type, String op, FunctionDescriptor descriptor,
                                         long slot) throws ReflectiveOperationException {
        MethodHandle target = MethodHandles.lookup().findVirtual(type, methodName(op), descriptor.toMethodType())
                .bindTo(bridge);
        MemorySegment stub = Linker.nativeLinker().upcallStub(target, descriptor, Arena.global());
        MEMORY.set(LONG, slot, stub.address());
        return stub;
    }

    /** {@code GET_PROPERTIES} becomes {@code getProperties}. */
    static String methodName(String op) {
        StringBuilder b = new StringBuilder();
        for (String part : op.toLowerCase(Locale.ROOT).split("_")) {
            b.append(b.isEmpty() ? part : Character.toUpperCase(part.charAt(0)) + part.substring(1));
        }
        return b.toString();
    }
}
