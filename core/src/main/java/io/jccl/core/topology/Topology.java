package io.jccl.core.topology;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A machine's topology ({@code <system>} and everything under it, as in NCCL's XML) and the
 * questions the engine asks of it: how far apart two devices are, and which NIC a GPU, or a rank
 * without one, should use. Read it with {@link SysfsTopology} or {@link TopologyXml}.
 */
public final class Topology {
    private final TopoNode system;

    public Topology(TopoNode system) {
        if (!system.tag().equals("system")) {
            throw new IllegalArgumentException("a topology's root is <system>, not " + system);
        }
        this.system = system;
    }

    public TopoNode root() {
        return system;
    }

    /** @return the CPUs (NUMA nodes) */
    public List<TopoNode> cpus() {
        return system.findAll("cpu");
    }

    /** @return the GPUs, ordered by {@code dev} */
    public List<TopoNode> gpus() {
        List<TopoNode> g = system.findAll("gpu");
        g.sort(Comparator.comparingLong(n -> n.getLong("dev", Long.MAX_VALUE)));
        return g;
    }

    /** @return the network ports ({@code <net>} under {@code <nic>}), ordered by {@code dev} then name */
    public List<TopoNode> nets() {
        List<TopoNode> n = system.findAll("net");
        n.sort(Comparator.<TopoNode>comparingLong(x -> x.getLong("dev", Long.MAX_VALUE))
                .thenComparing(x -> String.valueOf(x.get("name"))));
        return n;
    }

    /** @return the {@code <net>} named {@code name} (a transport's device name), or {@code null} */
    public TopoNode net(String name) {
        for (TopoNode n : nets()) {
            if (name.equals(n.get("name"))) {
                return n;
            }
        }
        return null;
    }

    /**
     * @return the path type between two devices ({@code gpu}, {@code net}, or their {@code pci}
     *         nodes), as NCCL computes it over the PCI tree: the PCIe switches in between, the CPU's
     *         host bridge, or the link between CPUs
     */
    public PathType path(TopoNode x, TopoNode y) {
        TopoNode a = device(x);
        TopoNode b = device(y);
        if (a == b) {
            return PathType.LOC;
        }
        List<TopoNode> chainA = selfAndAncestors(a);
        List<TopoNode> chainB = selfAndAncestors(b);
        int i = -1;
        int j = -1;
        for (int k = 0; k < chainA.size() && i < 0; k++) {
            int at = chainB.indexOf(chainA.get(k));
            if (at >= 0) {
                i = k;
                j = at;
            }
        }
        TopoNode common = i < 0 ? null : chainA.get(i);
        if (common == null || common.tag().equals("system")) {
            return PathType.SYS;
        }
        if (common.tag().equals("cpu")) {
            return PathType.PHB;
        }
        // Switches crossed: those strictly between each device and the common node, and the common
        // node itself unless it is one of the two devices.
        int switches = Math.max(0, i - 1) + Math.max(0, j - 1) + (i > 0 && j > 0 ? 1 : 0);
        return switches <= 1 ? PathType.PIX : PathType.PXB;
    }

    /** @return the node that stands for the device in the PCI tree: its {@code pci} node, or a CPU */
    private static TopoNode device(TopoNode n) {
        TopoNode pci = n.ancestor("pci");
        if (pci != null) {
            return pci;
        }
        TopoNode cpu = n.ancestor("cpu");
        if (cpu != null) {
            return cpu;
        }
        throw new IllegalArgumentException(n + " is not under a CPU or a PCI device");
    }

    /** @return {@code n} and its ancestors, nearest first, up to the root */
    private static List<TopoNode> selfAndAncestors(TopoNode n) {
        List<TopoNode> out = new ArrayList<>();
        for (TopoNode p = n; p != null; p = p.parent()) {
            out.add(p);
        }
        return out;
    }

    /**
     * Which NIC each GPU uses, as NCCL chooses: the closest ones (best path type), of those the
     * fastest, and GPUs that share the same candidates spread over them in GPU order.
     *
     * @return for each GPU (by {@link #gpus()} order) its {@code <net>}; empty without NICs
     */
    public Map<TopoNode, TopoNode> nicsForGpus() {
        Map<TopoNode, TopoNode> chosen = new LinkedHashMap<>();
        Map<TopoNode, Integer> load = new HashMap<>();
        List<TopoNode> nets = nets();
        if (nets.isEmpty()) {
            return chosen;
        }
        for (TopoNode gpu : gpus()) {
            TopoNode pick = closest(gpu, nets, load);
            chosen.put(gpu, pick);
            load.merge(pick, 1, Integer::sum);
        }
        return chosen;
    }

    /** @return the NIC for a rank without a GPU, on NUMA node {@code numaId}: the closest, fastest one */
    public TopoNode nicForNuma(int numaId) {
        List<TopoNode> nets = nets();
        if (nets.isEmpty()) {
            return null;
        }
        for (TopoNode cpu : cpus()) {
            if (cpu.getLong("numaid", -1) == numaId) {
                return closest(cpu, nets, Map.of());
            }
        }
        return closest(cpus().isEmpty() ? nets.get(0) : cpus().get(0), nets, Map.of());
    }

    private TopoNode closest(TopoNode from, List<TopoNode> nets, Map<TopoNode, Integer> load) {
        TopoNode best = null;
        for (TopoNode n : nets) {
            if (best == null || better(from, n, best, load)) {
                best = n;
            }
        }
        return best;
    }

    private boolean better(TopoNode from, TopoNode n, TopoNode best, Map<TopoNode, Integer> load) {
        int byPath = path(from, n).compareTo(path(from, best));
        if (byPath != 0) {
            return byPath < 0;
        }
        long speed = n.getLong("speed", 0);
        long bestSpeed = best.getLong("speed", 0);
        if (speed != bestSpeed) {
            return speed > bestSpeed;
        }
        return load.getOrDefault(n, 0) < load.getOrDefault(best, 0);
    }

    /** @return one line per GPU and NIC: where it sits and, for a GPU, the NIC it uses */
    public String describe() {
        StringBuilder b = new StringBuilder();
        for (TopoNode cpu : cpus()) {
            b.append(String.format(Locale.ROOT, "CPU NUMA %s%s%n", cpu.get("numaid"),
                    cpu.get("affinity") == null ? "" : " affinity " + cpu.get("affinity")));
        }
        Map<TopoNode, TopoNode> nics = nicsForGpus();
        for (TopoNode gpu : gpus()) {
            TopoNode nic = nics.get(gpu);
            b.append(String.format(Locale.ROOT, "GPU %s %s NUMA %s sm %s%s%n", gpu.get("dev"), busId(gpu), numa(gpu),
                    gpu.get("sm"), nic == null ? "" : " -> NIC " + nic.get("name") + " (" + path(gpu, nic) + ")"));
        }
        for (TopoNode net : nets()) {
            b.append(String.format(Locale.ROOT, "NIC %s %s NUMA %s speed %s Mb/s%n", net.get("name"), busId(net),
                    numa(net), net.get("speed")));
        }
        return b.toString();
    }

    private static String busId(TopoNode n) {
        TopoNode pci = n.ancestor("pci");
        return pci == null ? "(no PCI id)" : pci.get("busid");
    }

    private static String numa(TopoNode n) {
        TopoNode cpu = n.ancestor("cpu");
        return cpu == null ? "?" : cpu.get("numaid");
    }
}
