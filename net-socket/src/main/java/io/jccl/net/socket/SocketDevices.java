package io.jccl.net.socket;

import io.jccl.spi.config.InterfaceFilter;

import io.jccl.spi.NetProperties;
import io.jccl.spi.PointerType;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Finds the interfaces JcclSocket runs on, following NCCL's rules (spec 7.6): with
 * {@code NCCL_SOCKET_IFNAME}, the interfaces it selects; without, {@code ib*} interfaces, else every
 * interface but {@code lo}, {@code docker*} and {@code virbr*}, else {@code docker*}, else
 * {@code lo}, else {@code virbr*}. Only interfaces that are up with a usable address count; at most
 * 16, as in NCCL.
 */
final class SocketDevices {
    static final int MAX_DEVICES = 16;
    /** NCCL's speed when sysfs does not know it (virtual NICs, loopback). */
    static final int DEFAULT_SPEED_MBPS = 10_000;
    /** The most connections one device offers, as NCCL's socket transport. */
    static final int MAX_COMMS = 65_536;
    /** The most buffers in one grouped receive. */
    static final int MAX_RECVS = 8;
    /** The largest message (maxP2pBytes): NCCL's MAX_NET_SIZE, and small enough for test's int sizes. */
    static final long MAX_MESSAGE_BYTES = NetProperties.DEFAULT_MAX_P2P_BYTES;

    private SocketDevices() {
    }

    /** An interface and the address JcclSocket would use on it. */
    record Candidate(String name, InetAddress address, byte[] mac) {
    }

    /** @return the devices for these settings, in NCCL's order; empty if no interface qualifies */
    static List<SocketDevice> discover(SocketConfig.Settings settings, boolean deviceMemory) throws SocketException {
        List<Candidate> candidates = new ArrayList<>();
        for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (!nif.isUp()) {
                continue;
            }
            InetAddress address = InterfaceFilter.pickAddress(nif, settings.family());
            if (address != null) {
                candidates.add(new Candidate(nif.getName(), address, nif.getHardwareAddress()));
            }
        }
        List<Candidate> chosen = choose(candidates, settings.interfaces());
        List<SocketDevice> devices = new ArrayList<>();
        for (int i = 0; i < chosen.size() && i < MAX_DEVICES; i++) {
            Candidate c = chosen.get(i);
            devices.add(new SocketDevice(c.name(), c.address(), properties(c, i, deviceMemory)));
        }
        return devices;
    }

    /** NCCL's selection among the interfaces that are up and have an address. */
    static List<Candidate> choose(List<Candidate> candidates, String ifname) {
        return InterfaceFilter.choose(candidates, Candidate::name, ifname);
    }

    private static NetProperties properties(Candidate c, int index, boolean deviceMemory) {
        Path sys = Path.of("/sys/class/net", c.name());
        return NetProperties.builder(c.name())
                .pciPath(pciPath(sys))
                .guid(guid(c.mac(), index))
                .ptrSupport(PointerType.HOST.mask() | (deviceMemory ? PointerType.CUDA.mask() : 0))
                .speedMbps(speed(sys))
                .port(0)
                .latencyUs(0)
                .maxComms(MAX_COMMS)
                .maxRecvs(MAX_RECVS)
                .build();
    }

    /** The real path of the interface's device, as NCCL reports it; null for virtual interfaces. */
    static String pciPath(Path sysInterface) {
        try {
            Path device = sysInterface.resolve("device");
            if (!Files.exists(device)) {
                return null;
            }
            String real = device.toRealPath().toString();
            return real.startsWith("/sys/devices/virtual/") ? null : real;
        } catch (IOException e) {
            return null;
        }
    }

    /** Link speed in Mbps from sysfs; {@value #DEFAULT_SPEED_MBPS} when unknown (virtual NICs report -1). */
    static int speed(Path sysInterface) {
        try {
            int mbps = Integer.parseInt(Files.readString(sysInterface.resolve("speed")).trim());
            return mbps > 0 ? mbps : DEFAULT_SPEED_MBPS;
        } catch (IOException | NumberFormatException e) {
            return DEFAULT_SPEED_MBPS;
        }
    }

    /** The MAC address as a number (one per physical port); the device index when there is none. */
    private static long guid(byte[] mac, int index) {
        long g = 0;
        if (mac != null) {
            for (byte b : mac) {
                g = (g << 8) | (b & 0xff);
            }
        }
        return g != 0 ? g : index;
    }
}
