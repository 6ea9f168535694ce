package io.jccl.nativenet;

import io.jccl.spi.NetApiVersion;
import io.jccl.spi.NetProperties;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Reads {@code ncclNetProperties_vN_t} (spec 3.1 to 3.9) into {@link NetProperties}, filling what
 * older versions lack as NCCL's compat layer does (spec 4.5): regIsGlobal and forceFlush 0 before
 * v8 and v9, maxP2pBytes 1 GiB and maxCollBytes 512 MiB before v9.
 */
@SuppressWarnings("restricted") // FFM by design: native memory and calls are this class's job
final class NativeProperties {
    private NativeProperties() {
    }

    /** @return the device type the plugin reports (v7+: 0 host, 1 unpack; v6: host) */
    static int deviceType(NetApiVersion version, MemorySegment p) {
        return switch (version) {
            case V6 -> 0;
            case V7 -> p.get(JAVA_INT, 48);
            case V8 -> p.get(JAVA_INT, 52);
            default -> p.get(JAVA_INT, 56);
        };
    }

    static NetProperties read(NetApiVersion version, MemorySegment p) {
        NetProperties.Builder b = NetProperties.builder(string(p.get(JAVA_LONG, 0), "(unnamed)"))
                .pciPath(string(p.get(JAVA_LONG, 8), null))
                .guid(p.get(JAVA_LONG, 16))
                .ptrSupport(p.get(JAVA_INT, 24));
        switch (version) {
            case V6, V7 -> b.speedMbps(p.get(JAVA_INT, 28)).port(p.get(JAVA_INT, 32)).latencyUs(p.get(JAVA_FLOAT, 36))
                    .maxComms(p.get(JAVA_INT, 40)).maxRecvs(p.get(JAVA_INT, 44));
            case V8 -> b.regIsGlobal(p.get(JAVA_INT, 28) != 0).speedMbps(p.get(JAVA_INT, 32)).port(p.get(JAVA_INT, 36))
                    .latencyUs(p.get(JAVA_FLOAT, 40)).maxComms(p.get(JAVA_INT, 44)).maxRecvs(p.get(JAVA_INT, 48));
            default -> {
                long sizes = version == NetApiVersion.V12 ? 104 : 88;
                b.regIsGlobal(p.get(JAVA_INT, 28) != 0).forceFlush(p.get(JAVA_INT, 32) != 0)
                        .speedMbps(p.get(JAVA_INT, 36)).port(p.get(JAVA_INT, 40)).latencyUs(p.get(JAVA_FLOAT, 44))
                        .maxComms(p.get(JAVA_INT, 48)).maxRecvs(p.get(JAVA_INT, 52))
                        .maxP2pBytes(p.get(JAVA_LONG, sizes)).maxCollBytes(p.get(JAVA_LONG, sizes + 8));
            }
        }
        return b.build();
    }

    private static String string(long address, String ifNull) {
        return address == 0 ? ifNull : MemorySegment.ofAddress(address).reinterpret(Integer.MAX_VALUE).getString(0);
    }
}
