package io.jccl.core.topology;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * NCCL's topology XML of a two-socket server (eight GPUs, each pair of GPUs and one 200 Gb/s NIC
 * under a PCIe switch tree, plus a 25 Gb/s Ethernet NIC under CPU 0), kept as a fixture: it loads,
 * the path types and NIC choices are NCCL's, and it is written back byte for byte.
 */
class TopologyXmlTest {
    private static final String FIXTURE = "two-socket-8gpu-5nic.xml";

    private static String fixtureText() throws IOException {
        try (InputStream in = TopologyXmlTest.class.getResourceAsStream(FIXTURE)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static Topology fixture() throws IOException {
        return TopologyXml.read(new ByteArrayInputStream(fixtureText().getBytes(StandardCharsets.UTF_8)), FIXTURE);
    }

    private static TopoNode gpu(Topology t, int dev) {
        return t.gpus().stream().filter(g -> g.getLong("dev", -1) == dev).findFirst().orElseThrow();
    }

    @Test
    void theServerLoadsWithItsCpusGpusAndNics() throws IOException {
        Topology t = fixture();
        assertEquals(2, t.cpus().size());
        assertEquals(8, t.gpus().size());
        assertEquals(List.of("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "eth0"),
                t.nets().stream().map(n -> n.get("name")).toList());
        assertEquals("80", gpu(t, 5).get("sm"));
    }

    @Test
    void pathTypesFollowThePciTreeAsNcclCountsThem() throws IOException {
        Topology t = fixture();
        assertEquals(PathType.LOC, t.path(gpu(t, 0), gpu(t, 0)));
        assertEquals(PathType.PIX, t.path(gpu(t, 0), t.net("mlx5_0")), "one switch between them");
        assertEquals(PathType.PXB, t.path(gpu(t, 1), t.net("mlx5_0")), "three switches, no CPU");
        assertEquals(PathType.PXB, t.path(gpu(t, 0), gpu(t, 1)));
        assertEquals(PathType.PHB, t.path(gpu(t, 0), gpu(t, 2)), "two switch trees of one CPU");
        assertEquals(PathType.PHB, t.path(gpu(t, 0), t.net("eth0")));
        assertEquals(PathType.SYS, t.path(gpu(t, 0), gpu(t, 4)), "across the sockets");
        assertEquals(PathType.SYS, t.path(t.net("mlx5_0"), t.net("mlx5_3")));
    }

    @Test
    void eachGpuGetsItsClosestFastestNicAsNcclChooses() throws IOException {
        Topology t = fixture();
        Map<TopoNode, TopoNode> nics = t.nicsForGpus();
        String[] expected = {"mlx5_0", "mlx5_0", "mlx5_1", "mlx5_1", "mlx5_2", "mlx5_2", "mlx5_3", "mlx5_3"};
        for (int dev = 0; dev < 8; dev++) {
            assertEquals(expected[dev], nics.get(gpu(t, dev)).get("name"), "GPU " + dev);
        }
        assertEquals("mlx5_2", t.nicForNuma(1).get("name"), "a rank without a GPU on socket 1: its fastest local NIC");
        assertEquals("mlx5_0", t.nicForNuma(0).get("name"), "200 Gb/s before the 25 Gb/s Ethernet");
        assertTrue(t.describe().contains("GPU 1 0000:0d:00.0 NUMA 0 sm 80 -> NIC mlx5_0 (PXB)"), t.describe());
    }

    @Test
    void aTopologyIsWrittenBackAsItWasRead(@TempDir Path dir) throws IOException {
        Topology t = fixture();
        assertEquals(fixtureText(), TopologyXml.toXml(t), "every element and attribute, in NCCL's order");
        Path dump = dir.resolve("dump.xml");
        TopologyXml.write(t, dump);
        assertEquals(TopologyXml.toXml(t), TopologyXml.toXml(TopologyXml.read(dump)));
    }

    @Test
    void aDumpThatNcclItselfWroteLoadsAndIsWrittenBackUnchanged() throws IOException {
        // NCCL 2.28.9's NCCL_TOPO_DUMP_FILE on an H100 VM (2026-11-23): a GPU, and a virtio NIC that
        // NCCL hangs under the CPU (its sysfs path ends in virtio2, not in a PCI address).
        String name = "nccl-2.28.9-h100-vm.xml";
        String text;
        try (InputStream in = TopologyXmlTest.class.getResourceAsStream(name)) {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Topology t = TopologyXml.read(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), name);
        assertEquals(1, t.gpus().size());
        assertEquals("90", t.gpus().get(0).get("sm"));
        assertEquals(PathType.PHB, t.path(t.gpus().get(0), t.net("eth0")));
        assertEquals("eth0", t.nicsForGpus().get(t.gpus().get(0)).get("name"));
        assertEquals(text, TopologyXml.toXml(t));
    }

    @Test
    void aFileThatIsNotATopologySaysWhereAndWhyInOneLine(@TempDir Path dir) throws IOException {
        Path broken = Files.writeString(dir.resolve("broken.xml"), "<system version=\"1\">\n  <cpu numaid=\"0\">\n</system>\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TopologyXml.read(broken));
        assertTrue(e.getMessage().startsWith(broken + ", line 3: not NCCL topology XML"), e.getMessage());
        Path other = Files.writeString(dir.resolve("other.xml"), "<graphs version=\"1\"/>\n");
        IllegalArgumentException root = assertThrows(IllegalArgumentException.class, () -> TopologyXml.read(other));
        assertTrue(root.getMessage().contains("the root element is <graphs>"), root.getMessage());
        Path entity = Files.writeString(dir.resolve("xxe.xml"), "<!DOCTYPE system [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
                + "<system version=\"1\">&x;</system>\n");
        IllegalArgumentException xxe = assertThrows(IllegalArgumentException.class, () -> TopologyXml.read(entity));
        assertTrue(xxe.getMessage().contains("DOCTYPE"), xxe.getMessage());
    }
}
