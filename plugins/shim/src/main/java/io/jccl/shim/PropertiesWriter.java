package io.jccl.shim;

import io.jccl.spi.NetProperties;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;

import static io.jccl.shim.ShimAbi.MEMORY;
import static io.jccl.shim.ShimAbi.PROPS;
import static io.jccl.shim.ShimAbi.offset;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Writes {@link NetProperties} into the shim's {@code jccl_props}. NCCL keeps the {@code name} and
 * {@code pciPath} pointers it is given, so their C strings are made once per distinct text and never
 * freed.
 */
final class PropertiesWriter {
    private static final long NAME = offset(PROPS, "name");
    private static final long PCI_PATH = offset(PROPS, "pciPath");
    private static final long GUID = offset(PROPS, "guid");
    private static final long PTR_SUPPORT = offset(PROPS, "ptrSupport");
    private static final long REG_IS_GLOBAL = offset(PROPS, "regIsGlobal");
    private static final long FORCE_FLUSH = offset(PROPS, "forceFlush");
    private static final long SPEED = offset(PROPS, "speed");
    private static final long PORT = offset(PROPS, "port");
    private static final long LATENCY = offset(PROPS, "latency");
    private static final long MAX_COMMS = offset(PROPS, "maxComms");
    private static final long MAX_RECVS = offset(PROPS, "maxRecvs");
    private static final long MAX_P2P_BYTES = offset(PROPS, "maxP2pBytes");
    private static final long MAX_COLL_BYTES = offset(PROPS, "maxCollBytes");
    /** NCCL's upper bound on maxP2pBytes and maxCollBytes (NCCL_MAX_NET_SIZE_BYTES, 1 TiB). */
    private static final long MAX_NET_SIZE_BYTES = 1L << 40;

    private final Map<String, MemorySegment> strings = new HashMap<>();

    synchronized void write(NetProperties p, long address) {
        MemorySegment props = MEMORY.asSlice(address, PROPS.byteSize());
        props.set(JAVA_LONG, NAME, cString(p.name()));
        props.set(JAVA_LONG, PCI_PATH, p.pciPath() == null ? 0 : cString(p.pciPath()));
        props.set(JAVA_LONG, GUID, p.guid());
        props.set(JAVA_INT, PTR_SUPPORT, p.ptrSupport());
        props.set(JAVA_INT, REG_IS_GLOBAL, p.regIsGlobal() ? 1 : 0);
        props.set(JAVA_INT, FORCE_FLUSH, p.forceFlush() ? 1 : 0);
        props.set(JAVA_INT, SPEED, p.speedMbps());
        props.set(JAVA_INT, PORT, p.port());
        props.set(JAVA_FLOAT, LATENCY, p.latencyUs());
        props.set(JAVA_INT, MAX_COMMS, p.maxComms());
        props.set(JAVA_INT, MAX_RECVS, p.maxRecvs());
        props.set(JAVA_LONG, MAX_P2P_BYTES, clamp(p.maxP2pBytes(), NetProperties.DEFAULT_MAX_P2P_BYTES));
        props.set(JAVA_LONG, MAX_COLL_BYTES, clamp(p.maxCollBytes(), NetProperties.DEFAULT_MAX_COLL_BYTES));
    }

    private static long clamp(long bytes, long unset) {
        return bytes <= 0 ? unset : Math.min(bytes, MAX_NET_SIZE_BYTES);
    }

    private long cString(String s) {
        return strings.computeIfAbsent(s, Arena.global()::allocateFrom).address();
    }
}
