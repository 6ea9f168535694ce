package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;
import io.jccl.net.ib.verbs.IbvLayouts;
import io.jccl.net.ib.verbs.Verbs;
import io.jccl.net.ib.verbs.VerbsException;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetResult;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Finds the transport's devices (spec 8.1): every active InfiniBand or RoCE port of every HCA that
 * {@code NCCL_IB_HCA} selects, in libibverbs' order, each with its GID and side-channel address.
 */
final class DeviceDiscovery {
    private DeviceDiscovery() {
    }

    /**
     * @return the devices, at least one
     * @throws NetException {@code ncclSystemError} saying why there is none
     */
    static List<IbDevice> discover(IbConfig config, NetLogger logger) throws NetException {
        if (!Verbs.isAvailable()) {
            throw new NetException(NetResult.SYSTEM_ERROR, "JcclIB: " + Verbs.unavailabilityCause().getMessage(),
                    Verbs.unavailabilityCause());
        }
        Verbs.DeviceList list;
        try {
            list = Verbs.getDeviceList();
        } catch (VerbsException e) {
            throw new NetException(NetResult.SYSTEM_ERROR, "JcclIB: no RDMA device: " + e.getMessage()
                    + (e.errno() == 38 ? " (the kernel has no RDMA support: load ib_uverbs and an adapter's driver, "
                    + "or rdma_rxe for SoftRoCE)" : ""), e);
        }
        List<IbDevice> devices = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        try {
            for (int d = 0; d < list.devices().size(); d++) {
                String name = list.names().get(d);
                Hca hca;
                try {
                    hca = Hca.open(list.devices().get(d), name, logger);
                } catch (VerbsException e) {
                    skipped.add(name + ": " + e.getMessage());
                    continue;
                }
                int before = devices.size();
                try {
                    addPorts(hca, config, devices, skipped);
                } catch (VerbsException e) {
                    skipped.add(name + ": " + e.getMessage());
                } catch (NetException | RuntimeException e) {
                    hca.close();
                    closeAll(devices);
                    throw e;
                }
                if (devices.size() == before) {
                    hca.close();
                }
            }
        } finally {
            Verbs.freeDeviceList(list);
        }
        if (devices.isEmpty()) {
            String why = list.names().isEmpty()
                    ? "ibv_get_device_list found no RDMA device (load an adapter's driver, or create a SoftRoCE one: "
                    + "rdma link add rxe0 type rxe netdev eth0)"
                    : "no usable port: " + String.join("; ", skipped);
            throw NetException.systemError("JcclIB: " + why);
        }
        for (IbDevice dev : devices) {
            logger.info(LogSubsystem.INIT | LogSubsystem.NET, "NET/JcclIB : device %d: %s, side channel %s", dev.index(),
                    dev, dev.oobAddress().getHostAddress());
        }
        return List.copyOf(devices);
    }

    private static void closeAll(List<IbDevice> devices) {
        java.util.Set<Hca> hcas = new java.util.LinkedHashSet<>();
        for (IbDevice d : devices) {
            hcas.add(d.hca());
        }
        hcas.forEach(Hca::close);
    }

    private static void addPorts(Hca hca, IbConfig config, List<IbDevice> devices, List<String> skipped)
            throws VerbsException, NetException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(IbvLayouts.PortAttr.LAYOUT);
            List<Integer> active = new ArrayList<>();
            int gidTotal = 0;
            for (int port = 1; port <= hca.portCount; port++) {
                Verbs.queryPort(hca.context, port, attr);
                gidTotal += Math.max(0, attr.get(JAVA_INT, IbvLayouts.PortAttr.GID_TBL_LEN));
                int state = attr.get(JAVA_INT, IbvLayouts.PortAttr.STATE);
                int linkLayer = attr.get(JAVA_BYTE, IbvLayouts.PortAttr.LINK_LAYER);
                if (state != Ibv.PORT_ACTIVE) {
                    skipped.add(hca.name + ":" + port + " is not active (state " + state + ")");
                } else if (linkLayer != Ibv.LINK_LAYER_INFINIBAND && linkLayer != Ibv.LINK_LAYER_ETHERNET) {
                    skipped.add(hca.name + ":" + port + " is neither InfiniBand nor RoCE (link layer " + linkLayer + ")");
                } else if (!config.hca().accepts(hca.name, port)) {
                    skipped.add(hca.name + ":" + port + " is not selected by " + IbConfig.NCCL_IB_HCA + "="
                            + config.hca());
                } else {
                    active.add(port);
                }
            }
            if (active.isEmpty()) {
                return;
            }
            List<GidSelector.Gid> table = gidTable(hca, Math.max(gidTotal, 1), arena);
            for (int port : active) {
                Verbs.queryPort(hca.context, port, attr);
                int linkLayer = attr.get(JAVA_BYTE, IbvLayouts.PortAttr.LINK_LAYER);
                List<GidSelector.Gid> gids = new ArrayList<>();
                for (GidSelector.Gid g : table) {
                    if (g.port() == port) {
                        gids.add(g);
                    }
                }
                GidSelector.Gid gid;
                try {
                    gid = GidSelector.select(linkLayer, gids, config);
                } catch (IllegalStateException e) {
                    skipped.add(hca.name + ":" + port + ": " + e.getMessage());
                    continue;
                }
                String unique = hca.portCount > 1 ? hca.name + ":" + port : hca.name;
                devices.add(new IbDevice(devices.size(), hca, port, linkLayer,
                        attr.get(JAVA_INT, IbvLayouts.PortAttr.ACTIVE_MTU),
                        attr.get(JAVA_SHORT, IbvLayouts.PortAttr.LID) & 0xffff,
                        attr.get(JAVA_INT, IbvLayouts.PortAttr.MAX_MSG_SZ) & 0xffffffffL,
                        LinkSpeed.mbps(attr.get(JAVA_BYTE, IbvLayouts.PortAttr.ACTIVE_SPEED) & 0xff,
                                attr.get(JAVA_BYTE, IbvLayouts.PortAttr.ACTIVE_WIDTH) & 0xff),
                        gid, oobAddress(config, gid, linkLayer == Ibv.LINK_LAYER_ETHERNET), unique));
            }
        }
    }

    private static List<GidSelector.Gid> gidTable(Hca hca, int max, Arena arena) throws VerbsException {
        MemorySegment entries = arena.allocate(IbvLayouts.GidEntry.LAYOUT, max);
        int n = Verbs.queryGidTable(hca.context, entries, max);
        List<GidSelector.Gid> gids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            MemorySegment e = entries.asSlice(i * IbvLayouts.GidEntry.LAYOUT.byteSize(), IbvLayouts.GidEntry.LAYOUT);
            byte[] raw = new byte[16];
            MemorySegment.copy(e, JAVA_BYTE, IbvLayouts.GidEntry.GID, raw, 0, 16);
            gids.add(new GidSelector.Gid(e.get(JAVA_INT, IbvLayouts.GidEntry.GID_INDEX),
                    e.get(JAVA_INT, IbvLayouts.GidEntry.GID_TYPE), raw, e.get(JAVA_INT, IbvLayouts.GidEntry.PORT_NUM)));
        }
        return gids;
    }

    /**
     * The side channel's local address: {@code JCCL_IB_OOB_ADDR}, else on RoCE the GID's own IP
     * address (it reaches every peer the adapter reaches), else the first non-loopback address.
     */
    static InetAddress oobAddress(IbConfig config, GidSelector.Gid gid, boolean roce) throws NetException {
        if (config.oobAddress() != null) {
            try {
                return InetAddress.getByName(config.oobAddress());
            } catch (UnknownHostException e) {
                throw NetException.invalidUsage(IbConfig.JCCL_IB_OOB_ADDR + "=" + config.oobAddress()
                        + " is not an address of this host");
            }
        }
        try {
            if (roce) {
                InetAddress a = gid.inetAddress();
                if (!a.isLinkLocalAddress() || a instanceof Inet4Address) {
                    if (NetworkInterface.getByInetAddress(a) != null) {
                        return a;
                    }
                }
            }
            InetAddress v6 = null;
            for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (!nif.isUp() || nif.isLoopback()) {
                    continue;
                }
                for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                    if (a instanceof Inet4Address) {
                        return a;
                    }
                    if (v6 == null && !a.isLinkLocalAddress()) {
                        v6 = a;
                    }
                }
            }
            return v6 != null ? v6 : InetAddress.getLoopbackAddress();
        } catch (SocketException e) {
            return InetAddress.getLoopbackAddress();
        }
    }
}
