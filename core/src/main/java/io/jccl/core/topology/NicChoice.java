package io.jccl.core.topology;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Which of a transport's devices a rank's channels use: the ones closest to where the rank runs,
 * as NCCL picks each GPU's NIC. A rank without a GPU is placed by its CPU affinity: bound to the
 * CPUs of one NUMA node, it uses the NICs with the best path to that node (of those, the fastest);
 * not bound, it spreads its channels over every device, as before.
 */
public final class NicChoice {
    private NicChoice() {
    }

    /** A transport device: its index, name and sysfs PCI path (either may locate it in the topology). */
    public record Device(int index, String name, String pciPath) {
    }

    /**
     * @param numaId the NUMA node the rank is bound to, or -1
     * @return the device indices to deal channels over, best first; every device when the rank is not
     *         bound, the topology does not know the devices, or there is only one
     */
    public static int[] devicesFor(Topology topology, List<Device> devices, int numaId) {
        int[] all = new int[devices.size()];
        for (int i = 0; i < all.length; i++) {
            all[i] = devices.get(i).index();
        }
        if (devices.size() < 2 || numaId < 0) {
            return all;
        }
        TopoNode cpu = null;
        for (TopoNode c : topology.cpus()) {
            if (c.getLong("numaid", -2) == numaId) {
                cpu = c;
            }
        }
        if (cpu == null) {
            return all;
        }
        List<TopoNode> nets = new ArrayList<>();
        for (Device d : devices) {
            TopoNode n = locate(topology, d);
            if (n == null) {
                return all; // a device the topology does not know: no basis for a choice
            }
            nets.add(n);
        }
        PathType best = PathType.SYS;
        long bestSpeed = 0;
        for (TopoNode n : nets) {
            PathType p = topology.path(cpu, n);
            long speed = n.getLong("speed", 0);
            if (p.compareTo(best) < 0 || p == best && speed > bestSpeed) {
                best = p;
                bestSpeed = speed;
            }
        }
        List<Integer> chosen = new ArrayList<>();
        for (int i = 0; i < nets.size(); i++) {
            if (topology.path(cpu, nets.get(i)) == best && nets.get(i).getLong("speed", 0) == bestSpeed) {
                chosen.add(devices.get(i).index());
            }
        }
        return chosen.stream().mapToInt(Integer::intValue).toArray();
    }

    /** @return the {@code <net>} for a transport device: by name, else by the PCI device of its path */
    static TopoNode locate(Topology topology, Device d) {
        TopoNode byName = d.name() == null ? null : topology.net(d.name());
        if (byName != null) {
            return byName;
        }
        if (d.pciPath() == null) {
            return null;
        }
        String busId = null;
        for (String part : d.pciPath().split("/")) {
            if (part.matches("\\p{XDigit}{4}:\\p{XDigit}{2}:\\p{XDigit}{2}\\.\\p{XDigit}")) {
                busId = part.toLowerCase(java.util.Locale.ROOT);
            }
        }
        for (TopoNode n : topology.nets()) {
            TopoNode pci = n.ancestor("pci");
            if (pci != null && pci.get("busid") != null && pci.get("busid").equalsIgnoreCase(busId)) {
                return n;
            }
        }
        return null;
    }

    /**
     * @return the NUMA node whose CPUs are exactly the ones this process may run on (a launcher's
     *         {@code --bind-to numa}, {@code numactl -N}), or -1 when it may run on CPUs of several
     */
    public static int boundNumaNode(Path sys, String cpusAllowedList) {
        BitSet allowed = parseList(cpusAllowedList);
        if (allowed == null || allowed.isEmpty()) {
            return -1;
        }
        int found = -1;
        List<Path> nodes = new ArrayList<>();
        try (var s = Files.list(sys.resolve("devices/system/node"))) {
            s.filter(p -> p.getFileName().toString().matches("node\\d+")).forEach(nodes::add);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        for (Path node : nodes) {
            BitSet cpus;
            try {
                cpus = parseList(Files.readString(node.resolve("cpulist"), StandardCharsets.US_ASCII).trim());
            } catch (IOException e) {
                return -1;
            }
            if (cpus == null) {
                return -1;
            }
            BitSet inside = (BitSet) allowed.clone();
            inside.and(cpus);
            if (inside.isEmpty()) {
                continue;
            }
            BitSet outside = (BitSet) allowed.clone();
            outside.andNot(cpus);
            if (!outside.isEmpty() || found >= 0) {
                return -1; // CPUs of more than one node
            }
            found = Integer.parseInt(node.getFileName().toString().substring(4));
        }
        return found;
    }

    /** @return this process's NUMA binding, from /proc/self/status, or -1 */
    public static int boundNumaNode() {
        String allowed = CpuBinding.allowedList();
        return allowed.isEmpty() ? -1 : boundNumaNode(Path.of("/sys"), allowed);
    }

    /** Parses a kernel CPU list such as {@code 0-3,8,10-11}; null if malformed. */
    static BitSet parseList(String list) {
        BitSet b = new BitSet();
        if (list == null || list.isBlank()) {
            return b;
        }
        try {
            for (String part : list.split(",")) {
                String p = part.trim();
                int dash = p.indexOf('-');
                if (dash < 0) {
                    b.set(Integer.parseInt(p));
                } else {
                    b.set(Integer.parseInt(p.substring(0, dash)), Integer.parseInt(p.substring(dash + 1)) + 1);
                }
            }
        } catch (NumberFormatException | IndexOutOfBoundsException e) {
            return null;
        }
        return b;
    }
}
