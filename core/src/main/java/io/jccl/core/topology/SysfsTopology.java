package io.jccl.core.topology;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Reads the machine's topology from sysfs as NCCL does ({@code ncclTopoGetXmlFromSys}): every GPU
 * (NVIDIA display or 3D controller) and NIC (network controller) on the PCI bus, with the path of
 * PCI nodes from it up to its CPU. The real path of {@code /sys/bus/pci/devices/BDF} names the
 * PCI hierarchy; a PCIe switch shows there as an upstream and a downstream port, and, as in NCCL,
 * becomes one node named by its upstream port (each device's parent is two levels up). A device
 * whose path reaches the root complex belongs to the CPU of its {@code numa_node}.
 */
public final class SysfsTopology {
    /** What NCCL assumes of a NIC that does not tell its speed: 10 Gb/s. */
    static final long UNKNOWN_SPEED = 10_000;
    private static final Pattern BDF = Pattern.compile("\\p{XDigit}{4}:\\p{XDigit}{2}:\\p{XDigit}{2}\\.\\p{XDigit}");

    private final Path sys;
    private final TopoNode system = new TopoNode("system").set("version", "1");
    private final Map<String, TopoNode> pciByBusId = new HashMap<>();
    private final Map<String, TopoNode> cpuByNuma = new HashMap<>();

    private SysfsTopology(Path sys) {
        this.sys = sys;
    }

    /** @return the topology of this machine ({@code /sys}) */
    public static Topology detect() {
        return detect(Path.of("/sys"));
    }

    /**
     * @param sys the sysfs root: {@code /sys}, or a recorded copy of its relevant parts
     * @return the CPUs, the PCI tree, the GPUs and the NICs found; empty where there is no PCI bus
     */
    public static Topology detect(Path sys) {
        SysfsTopology t = new SysfsTopology(sys);
        t.scan();
        if (sys.equals(Path.of("/sys"))) {
            t.fillFromCuda();
        }
        return new Topology(t.system);
    }

    /**
     * Gives each GPU CUDA's device number and compute capability ({@code dev}, {@code sm}), as NCCL
     * does from NVML, where the CUDA driver is there; sysfs alone knows neither.
     */
    private void fillFromCuda() {
        if (!io.jccl.cuda.Cuda.isAvailable()) {
            return;
        }
        try {
            for (int d = 0; d < io.jccl.cuda.Cuda.deviceCount(); d++) {
                io.jccl.cuda.CudaDevice gpu = io.jccl.cuda.Cuda.device(d);
                TopoNode pci = pciByBusId.get(gpu.pciBusId().toLowerCase(Locale.ROOT));
                TopoNode node = pci == null ? null : pci.child("gpu");
                if (node != null) {
                    node.set("dev", Integer.toString(d))
                            .set("sm", gpu.computeCapability().replace(".", ""));
                }
            }
        } catch (RuntimeException e) {
            // A driver that answers badly leaves the sysfs numbering: the topology is still right.
        }
    }

    private void scan() {
        Path devices = sys.resolve("bus/pci/devices");
        List<Path> entries = list(devices);
        entries.sort(null);
        int gpus = 0;
        List<Path> nics = new ArrayList<>();
        for (Path entry : entries) {
            String cls = read(entry.resolve("class"));
            String vendor = read(entry.resolve("vendor"));
            if (cls == null) {
                continue;
            }
            boolean gpu = "0x10de".equalsIgnoreCase(vendor) && (cls.startsWith("0x0300") || cls.startsWith("0x0302"));
            if (gpu) {
                TopoNode pci = pciNode(realPath(entry));
                pci.add(new TopoNode("gpu").set("dev", Integer.toString(gpus++)));
            } else if (cls.startsWith("0x02")) {
                nics.add(entry);
            }
        }
        Map<Path, List<String[]>> ports = netPorts();
        int dev = 0;
        for (Path entry : nics) {
            Path real = realPath(entry);
            List<String[]> mine = ports.getOrDefault(real, List.of());
            if (mine.isEmpty()) {
                continue; // a network controller without a driver's interface: nothing to use
            }
            TopoNode nic = pciNode(real).add(new TopoNode("nic"));
            for (String[] port : mine) {
                nic.add(new TopoNode("net").set("name", port[0]).set("dev", Integer.toString(dev++))
                        .set("speed", port[1]).set("port", port[2]));
            }
        }
    }

    /**
     * @return the network interfaces and InfiniBand ports, by the real path of their PCI device:
     *         {name, speed in Mb/s, port}
     */
    private Map<Path, List<String[]>> netPorts() {
        Map<Path, List<String[]>> ports = new HashMap<>();
        List<Path> ib = list(sys.resolve("class/infiniband"));
        ib.sort(null);
        for (Path d : ib) {
            Path pci = pciDeviceOf(d.resolve("device"));
            if (pci == null) {
                continue;
            }
            List<Path> ps = list(d.resolve("ports"));
            ps.sort(null);
            for (Path p : ps) {
                String rate = read(p.resolve("rate")); // e.g. "100 Gb/sec (4X EDR)"
                long mbps = 0;
                if (rate != null && rate.contains(" Gb/sec")) {
                    try {
                        mbps = (long) (Double.parseDouble(rate.substring(0, rate.indexOf(' '))) * 1000);
                    } catch (NumberFormatException e) {
                        mbps = 0;
                    }
                }
                ports.computeIfAbsent(pci, k -> new ArrayList<>()).add(new String[] {
                        d.getFileName().toString(), Long.toString(mbps), p.getFileName().toString()});
            }
        }
        List<Path> net = list(sys.resolve("class/net"));
        net.sort(null);
        for (Path n : net) {
            Path pci = pciDeviceOf(n.resolve("device"));
            if (pci == null || ports.containsKey(pci)) {
                continue; // virtual, or the Ethernet face of an InfiniBand device already listed
            }
            String speed = read(n.resolve("speed"));
            long mbps;
            try {
                mbps = speed == null ? UNKNOWN_SPEED : Long.parseLong(speed);
            } catch (NumberFormatException e) {
                mbps = UNKNOWN_SPEED;
            }
            if (mbps <= 0) {
                mbps = UNKNOWN_SPEED; // virtio and other virtual NICs report -1
            }
            ports.computeIfAbsent(pci, k -> new ArrayList<>()).add(new String[] {
                    n.getFileName().toString(), Long.toString(mbps), "1"});
        }
        return ports;
    }

    /** @return the real path of the PCI device behind {@code link} (a virtio device's parent), or null */
    private Path pciDeviceOf(Path link) {
        if (!Files.exists(link)) {
            return null;
        }
        Path p = realPath(link);
        while (p != null && p.getFileName() != null && !BDF.matcher(p.getFileName().toString()).matches()) {
            p = p.getParent();
        }
        return p == null || p.getFileName() == null ? null : p;
    }

    /** The node of the PCI device at {@code path}, made with its parents if new. */
    private TopoNode pciNode(Path path) {
        String busId = path.getFileName().toString().toLowerCase(Locale.ROOT);
        TopoNode n = pciByBusId.get(busId);
        if (n != null) {
            return n;
        }
        n = new TopoNode("pci").set("busid", busId);
        copy(path, "class", n, "class");
        copy(path, "vendor", n, "vendor");
        copy(path, "device", n, "device");
        copy(path, "subsystem_vendor", n, "subsystem_vendor");
        copy(path, "subsystem_device", n, "subsystem_device");
        String speed = read(path.resolve("max_link_speed"));
        String portSpeed = read(path.getParent().resolve("max_link_speed"));
        n.set("link_speed", slower(speed, portSpeed));
        String width = read(path.resolve("max_link_width"));
        String portWidth = read(path.getParent().resolve("max_link_width"));
        n.set("link_width", narrower(width, portWidth));
        pciByBusId.put(busId, n);
        parentOf(path).add(n);
        return n;
    }

    /** NCCL's rule: two levels up, unless the root complex comes first (then the CPU). */
    private TopoNode parentOf(Path path) {
        Path up = path.getParent();
        if (up == null || !isBdf(up)) {
            return cpu(path);
        }
        Path upTwo = up.getParent();
        if (upTwo == null || !isBdf(upTwo)) {
            return cpu(path);
        }
        return pciNode(upTwo);
    }

    private static boolean isBdf(Path p) {
        return p.getFileName() != null && BDF.matcher(p.getFileName().toString()).matches();
    }

    private TopoNode cpu(Path device) {
        String numa = read(device.resolve("numa_node"));
        String id = numa == null ? "-1" : numa;
        return cpuByNuma.computeIfAbsent(id, k -> {
            TopoNode c = new TopoNode("cpu").set("numaid", k);
            String cpumap = read(sys.resolve("devices/system/node/node" + k + "/cpumap"));
            if (cpumap != null) {
                c.set("affinity", cpumap);
            }
            String arch = System.getProperty("os.arch");
            c.set("arch", "amd64".equals(arch) ? "x86_64" : "aarch64".equals(arch) ? "arm64" : arch);
            return system.add(c);
        });
    }

    private static String slower(String a, String b) {
        if (a == null) {
            return b == null ? "" : b;
        }
        if (b == null) {
            return a;
        }
        return gts(b) < gts(a) ? b : a;
    }

    private static double gts(String s) {
        try {
            return Double.parseDouble(s.substring(0, s.indexOf(' ') < 0 ? s.length() : s.indexOf(' ')));
        } catch (NumberFormatException e) {
            return Double.MAX_VALUE;
        }
    }

    private static String narrower(String a, String b) {
        try {
            if (a == null) {
                return b == null ? "" : b;
            }
            return b == null ? a : Integer.toString(Math.min(Integer.parseInt(a), Integer.parseInt(b)));
        } catch (NumberFormatException e) {
            return a;
        }
    }

    private static void copy(Path dir, String file, TopoNode n, String attribute) {
        String v = read(dir.resolve(file));
        if (v != null) {
            n.set(attribute, v);
        }
    }

    private static String read(Path file) {
        try {
            return Files.isRegularFile(file) ? Files.readString(file, StandardCharsets.US_ASCII).trim() : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static Path realPath(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            return p.toAbsolutePath().normalize();
        }
    }

    private static List<Path> list(Path dir) {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            for (Path p : s) {
                out.add(p);
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }
}
