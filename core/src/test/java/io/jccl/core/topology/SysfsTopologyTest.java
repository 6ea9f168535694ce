package io.jccl.core.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The topology read from sysfs: a recorded layout of a server's sysfs (files and symbolic links as
 * the kernel lays them out: a GPU and an InfiniBand HCA behind the two downstream ports of one PCIe
 * switch on socket 0, an Ethernet NIC on socket 1's root complex), and this machine's own.
 */
class SysfsTopologyTest {

    /** Writes a PCI device's attribute files. */
    private static Path device(Path dir, String cls, String vendor, String numa, String speed, String width)
            throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("class"), cls + "\n");
        Files.writeString(dir.resolve("vendor"), vendor + "\n");
        Files.writeString(dir.resolve("device"), "0x1234\n");
        Files.writeString(dir.resolve("numa_node"), numa + "\n");
        Files.writeString(dir.resolve("max_link_speed"), speed + "\n");
        Files.writeString(dir.resolve("max_link_width"), width + "\n");
        return dir;
    }

    private static void link(Path sys, String bdf, Path target) throws IOException {
        Path l = sys.resolve("bus/pci/devices").resolve(bdf);
        Files.createDirectories(l.getParent());
        Files.createSymbolicLink(l, target);
    }

    private static Path recordedServer(Path sys) throws IOException {
        Path root0 = sys.resolve("devices/pci0000:00");
        Path rootPort = device(root0.resolve("0000:00:01.0"), "0x060400", "0x8086", "0", "16.0 GT/s PCIe", "16");
        Path up = device(rootPort.resolve("0000:01:00.0"), "0x060400", "0x1000", "0", "16.0 GT/s PCIe", "16");
        Path downA = device(up.resolve("0000:02:00.0"), "0x060400", "0x1000", "0", "16.0 GT/s PCIe", "16");
        Path downB = device(up.resolve("0000:02:01.0"), "0x060400", "0x1000", "0", "8.0 GT/s PCIe", "16");
        Path gpu = device(downA.resolve("0000:03:00.0"), "0x030200", "0x10de", "0", "32.0 GT/s PCIe", "16");
        Path hca = device(downB.resolve("0000:04:00.0"), "0x020700", "0x15b3", "0", "16.0 GT/s PCIe", "16");
        Path root1 = sys.resolve("devices/pci0000:80");
        Path port1 = device(root1.resolve("0000:80:02.0"), "0x060400", "0x8086", "1", "8.0 GT/s PCIe", "8");
        Path eth = device(port1.resolve("0000:81:00.0"), "0x020000", "0x8086", "1", "8.0 GT/s PCIe", "8");
        Path vga = device(root0.resolve("0000:00:02.0"), "0x030000", "0x1a03", "0", "2.5 GT/s PCIe", "1");
        for (Path p : new Path[] {rootPort, up, downA, downB, gpu, hca, port1, eth, vga}) {
            link(sys, p.getFileName().toString(), p);
        }
        Path ib = sys.resolve("class/infiniband/mlx5_0");
        Files.createDirectories(ib.resolve("ports/1"));
        Files.writeString(ib.resolve("ports/1/rate"), "200 Gb/sec (4X HDR)\n");
        Files.createSymbolicLink(ib.resolve("device"), hca);
        Path net = sys.resolve("class/net/ens81");
        Files.createDirectories(net);
        Files.writeString(net.resolve("speed"), "25000\n");
        Files.createSymbolicLink(net.resolve("device"), eth);
        Path ibNet = sys.resolve("class/net/ib0"); // the HCA's IPoIB face: the same port, not a second NIC
        Files.createDirectories(ibNet);
        Files.createSymbolicLink(ibNet.resolve("device"), hca);
        Path lo = sys.resolve("class/net/lo"); // virtual: no device
        Files.createDirectories(lo);
        Path node0 = sys.resolve("devices/system/node/node0");
        Files.createDirectories(node0);
        Files.writeString(node0.resolve("cpumap"), "00000000,0000ffff\n");
        return sys;
    }

    @Test
    void aRecordedServerBecomesNcclsTreeWithEachSwitchOneNode(@TempDir Path dir) throws IOException {
        Topology t = SysfsTopology.detect(recordedServer(dir));
        assertEquals(2, t.cpus().size());
        assertEquals(1, t.gpus().size(), "the ASPEED VGA controller is no GPU");
        TopoNode gpu = t.gpus().get(0);
        TopoNode gpuPci = gpu.parent();
        assertEquals("0000:03:00.0", gpuPci.get("busid"));
        assertEquals("16.0 GT/s PCIe", gpuPci.get("link_speed"), "the slower of the GPU and its port");
        TopoNode sw = gpuPci.parent();
        assertEquals("0000:01:00.0", sw.get("busid"), "the switch is named by its upstream port");
        assertEquals("cpu", sw.parent().tag());
        assertEquals("0", sw.parent().get("numaid"));
        assertEquals("00000000,0000ffff", sw.parent().get("affinity"));

        assertEquals(2, t.nets().size(), "mlx5_0 and ens81; ib0 is mlx5_0's port, lo is virtual");
        TopoNode hca = t.net("mlx5_0");
        assertNotNull(hca);
        assertEquals("200000", hca.get("speed"));
        assertEquals(PathType.PIX, t.path(gpu, hca));
        TopoNode eth = t.net("ens81");
        assertEquals("25000", eth.get("speed"));
        assertEquals("1", eth.ancestor("cpu").get("numaid"));
        assertEquals(PathType.SYS, t.path(gpu, eth));
        assertEquals("mlx5_0", t.nicsForGpus().get(gpu).get("name"));
        assertEquals("ens81", t.nicForNuma(1).get("name"));

        // What NCCL_TOPO_DUMP_FILE writes loads again, the same.
        Topology again = TopologyXml.read(Files.writeString(dir.resolve("dump.xml"), TopologyXml.toXml(t)));
        assertEquals(TopologyXml.toXml(t), TopologyXml.toXml(again));
    }

    @Test
    void aMachineWithoutPciInSysfsHasAnEmptyTopology(@TempDir Path dir) {
        Topology t = SysfsTopology.detect(dir);
        assertTrue(t.gpus().isEmpty() && t.nets().isEmpty() && t.cpus().isEmpty());
        assertEquals(null, t.nicForNuma(0));
    }

    @Test
    void thisMachinesOwnSysfsReadsAndEveryNicSitsUnderACpu() {
        assumeTrue(Files.isDirectory(Path.of("/sys/bus/pci/devices")), "no PCI bus in this machine's sysfs");
        Topology t = SysfsTopology.detect();
        for (TopoNode net : t.nets()) {
            assertNotNull(net.ancestor("cpu"), net + " has no CPU");
            assertNotNull(net.ancestor("pci"), net + " has no PCI device");
        }
        if (Files.exists(Path.of("/sys/class/net/eth0/device"))) {
            assertNotNull(t.net("eth0"), "eth0 has a PCI device here:\n" + TopologyXml.toXml(t));
        }
    }
}
