package io.jccl.tck.internal.net;

import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

/** The life-cycle and property rules ({@code life.*}) of a point-to-point transport. */
public final class LifecycleChecks {
    /** NCCL refuses maxP2pBytes and maxCollBytes outside (0, 1 TiB] (spec 5.3). */
    private static final long ONE_TIB = 1L << 40;

    private final NetKit kit;

    public LifecycleChecks(NetKit kit) {
        this.kit = kit;
    }

    private NetPlugin plugin() {
        return kit.plugin();
    }

    private List<NetProperties> allProperties() throws NetException {
        List<NetProperties> all = new ArrayList<>();
        for (int dev = 0; dev < plugin().devices(); dev++) {
            NetProperties p = plugin().getProperties(dev);
            assertNotNull(p, "getProperties(" + dev + ") returned null");
            all.add(p);
        }
        return all;
    }

    public void initTwice(NetLogger logger) throws NetException {
        int devices = plugin().devices();
        List<NetProperties> before = allProperties();
        plugin().init(logger);
        assertEquals(devices, plugin().devices(), "devices() changed after a second init: the second call must keep the "
                + "state of the first (NCCL 2.28+ calls init once per communicator)");
        assertEquals(before, allProperties(), "device properties changed after a second init");
    }

    public void devicesAtLeastOne() throws NetException {
        int n = plugin().devices();
        if (n < 1) {
            fail("devices() = " + n + " after a successful init: a transport with no usable device must fail init "
                    + "instead (spec 5.3), so that NCCL falls back to the next network");
        }
    }

    public void deviceNamesUnique() throws NetException {
        namesUnique(allProperties());
    }

    /** Fails unless every device has a non-blank name of its own. */
    public static void namesUnique(List<NetProperties> all) {
        Map<String, Integer> seen = new HashMap<>();
        for (int dev = 0; dev < all.size(); dev++) {
            String name = all.get(dev).name();
            if (name.isBlank()) {
                fail("device " + dev + " has a blank name");
            }
            Integer other = seen.putIfAbsent(name, dev);
            if (other != null) {
                fail("devices " + other + " and " + dev + " are both named '" + name + "': NCCL keys its topology "
                        + "by device name (spec 5.3)");
            }
        }
    }

    public void propertiesInRange() throws NetException {
        inRange(allProperties());
    }

    /** Fails unless every device's numeric properties are in range. */
    public static void inRange(List<NetProperties> all) {
        List<String> problems = new ArrayList<>();
        for (int dev = 0; dev < all.size(); dev++) {
            NetProperties p = all.get(dev);
            String d = "device " + dev + " (" + p.name() + "): ";
            if (p.speedMbps() <= 0) {
                problems.add(d + "speed " + p.speedMbps() + " Mbps; must be > 0 (NCCL sizes rings by it)");
            }
            if (p.maxComms() < 1) {
                problems.add(d + "maxComms " + p.maxComms() + "; must be >= 1");
            }
            if (p.maxRecvs() < 1) {
                problems.add(d + "maxRecvs " + p.maxRecvs() + "; must be >= 1 (1 when grouped receives are unsupported)");
            }
            if (p.latencyUs() < 0 || Float.isNaN(p.latencyUs())) {
                problems.add(d + "latency " + p.latencyUs() + " us; must be >= 0 (0 = NCCL's default)");
            }
            if (p.maxP2pBytes() <= 0 || p.maxP2pBytes() > ONE_TIB) {
                problems.add(d + "maxP2pBytes " + p.maxP2pBytes() + "; must be in (0, 1 TiB]");
            }
            if (p.maxCollBytes() <= 0 || p.maxCollBytes() > ONE_TIB) {
                problems.add(d + "maxCollBytes " + p.maxCollBytes() + "; must be in (0, 1 TiB]");
            }
        }
        if (!problems.isEmpty()) {
            fail(String.join("\n", problems));
        }
    }

    public void hostPointers() throws NetException {
        hostPointers(allProperties());
    }

    /** Fails unless every device supports host memory and only NCCL's pointer types. */
    public static void hostPointers(List<NetProperties> all) {
        int known = PointerType.maskOf(PointerType.values());
        for (int dev = 0; dev < all.size(); dev++) {
            int ptr = all.get(dev).ptrSupport();
            if (!PointerType.HOST.isIn(ptr)) {
                fail("device " + dev + " ptrSupport = " + PointerType.describe(ptr) + ": it must include HOST; "
                        + "NCCL stages through host memory whenever GPUDirect is not used");
            }
            if ((ptr & ~known) != 0) {
                fail("device " + dev + " ptrSupport = " + PointerType.describe(ptr) + " has bits NCCL does not define");
            }
        }
    }

    public void propertiesOutOfRange() throws NetException {
        int n = plugin().devices();
        for (int dev : new int[] {-1, n, Integer.MAX_VALUE}) {
            try {
                NetProperties p = plugin().getProperties(dev);
                fail("getProperties(" + dev + ") with " + n + " device(s) returned " + p + " instead of failing");
            } catch (NetException e) {
                assertEquals(NetResult.INVALID_ARGUMENT, e.result(), "getProperties(" + dev + ") failed with "
                        + e + "; an index out of range is ncclInvalidArgument");
            } catch (RuntimeException e) {
                fail("getProperties(" + dev + ") threw " + e + " instead of a NetException(ncclInvalidArgument)"
                        + "; through the native shim an unchecked exception is a crash");
            }
        }
    }

    public void nameIsUsable() {
        String name = plugin().name();
        if (name == null || name.isBlank()) {
            fail("name() is " + (name == null ? "null" : "blank") + ": NCCL_NET selects transports by name");
        }
        if (!name.equals(plugin().name())) {
            fail("name() changed between two calls");
        }
        if (name.equalsIgnoreCase("IB") || name.equalsIgnoreCase("Socket")) {
            fail("name() is '" + name + "', the name of one of NCCL's internal transports: NCCL_NET=" + name
                    + " would pick NCCL's own instead of this one");
        }
        if (!name.chars().allMatch(c -> c > ' ' && c < 127)) {
            fail("name() '" + name + "' has spaces or non-ASCII characters; NCCL_NET values and log lines need a "
                    + "plain token");
        }
    }
}
