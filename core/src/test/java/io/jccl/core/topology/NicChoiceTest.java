package io.jccl.core.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Which transport devices a rank's rings use: on the two-socket fixture, a rank bound to a NUMA
 * node takes that node's fastest NICs, found by name or by PCI path; an unbound rank, or devices the
 * topology does not know, keep every device. The binding comes from the CPUs a process may use.
 */
class NicChoiceTest {

    private static Topology fixture() throws IOException {
        try (InputStream in = NicChoiceTest.class.getResourceAsStream("two-socket-8gpu-5nic.xml")) {
            return TopologyXml.read(in, "fixture");
        }
    }

    // The transport's own device order differs from the topology's on purpose.
    private static final List<NicChoice.Device> DEVICES = List.of(
            new NicChoice.Device(0, "eth0", null),
            new NicChoice.Device(1, "mlx5_3", null),
            new NicChoice.Device(2, "mlx5_0", null),
            new NicChoice.Device(3, "renamed", "/sys/devices/pci0000:00/0000:00:03.0/0000:33:00.0/0000:34:00.0/0000:36:00.0"),
            new NicChoice.Device(4, "mlx5_2", null));

    @Test
    void aRankBoundToANumaNodeUsesThatNodesFastestNics() throws IOException {
        Topology t = fixture();
        assertArrayEquals(new int[] {2, 3}, NicChoice.devicesFor(t, DEVICES, 0),
                "mlx5_0 by name and mlx5_1 by its PCI path; not the 25 Gb/s eth0");
        assertArrayEquals(new int[] {1, 4}, NicChoice.devicesFor(t, DEVICES, 1));
    }

    @Test
    void withoutABindingOrWithUnknownDevicesEveryDeviceIsUsed() throws IOException {
        Topology t = fixture();
        assertArrayEquals(new int[] {0, 1, 2, 3, 4}, NicChoice.devicesFor(t, DEVICES, -1));
        List<NicChoice.Device> unknown = List.of(new NicChoice.Device(0, "mlx5_0", null),
                new NicChoice.Device(1, "tap9", null));
        assertArrayEquals(new int[] {0, 1}, NicChoice.devicesFor(t, unknown, 0));
        assertArrayEquals(new int[] {0, 1, 2, 3, 4}, NicChoice.devicesFor(t, DEVICES, 7), "no such node");
    }

    @Test
    void theBindingIsTheNodeThatHoldsEveryAllowedCpu(@TempDir Path sys) throws IOException {
        Files.createDirectories(sys.resolve("devices/system/node/node0"));
        Files.createDirectories(sys.resolve("devices/system/node/node1"));
        Files.writeString(sys.resolve("devices/system/node/node0/cpulist"), "0-3,8-11\n");
        Files.writeString(sys.resolve("devices/system/node/node1/cpulist"), "4-7,12-15\n");
        assertEquals(1, NicChoice.boundNumaNode(sys, "4-7,12-15"));
        assertEquals(0, NicChoice.boundNumaNode(sys, "2"));
        assertEquals(-1, NicChoice.boundNumaNode(sys, "0-15"), "unbound");
        assertEquals(-1, NicChoice.boundNumaNode(sys, "3-4"), "across two nodes");
        assertEquals(-1, NicChoice.boundNumaNode(sys, "x-y"), "unreadable");
        assertEquals(-1, NicChoice.boundNumaNode(sys.resolve("missing"), "0"), "no NUMA information");
    }
}
