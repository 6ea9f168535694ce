package io.jccl.net.socket;


import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SocketDevicesTest {

    private static List<String> chosen(String ifname, String... names) {
        List<SocketDevices.Candidate> c = java.util.Arrays.stream(names)
                .map(n -> new SocketDevices.Candidate(n, InetAddress.getLoopbackAddress(), null)).toList();
        return SocketDevices.choose(c, ifname).stream().map(SocketDevices.Candidate::name).toList();
    }

    @Test
    void defaultOrderPrefersIbThenRealNicsThenDockerThenLoopback() {
        assertEquals(List.of("ib0"), chosen(null, "lo", "eth0", "ib0"));
        assertEquals(List.of("eth0", "enp2s0"), chosen(null, "lo", "docker0", "eth0", "virbr0", "enp2s0"));
        assertEquals(List.of("docker0"), chosen(null, "lo", "docker0", "virbr0"));
        assertEquals(List.of("lo"), chosen(null, "lo", "virbr0"));
        assertEquals(List.of("virbr0"), chosen(null, "virbr0"));
        assertEquals(List.of("lo"), chosen("=lo", "lo", "eth0"));
        assertEquals(List.of("eth0"), chosen("^lo,docker", "lo", "eth0", "docker0"));
    }

    @Test
    void speedAndPciPathComeFromSysfsWithDocumentedDefaults(@TempDir Path sys) throws IOException {
        Path nic = Files.createDirectories(sys.resolve("eth9"));
        assertEquals(SocketDevices.DEFAULT_SPEED_MBPS, SocketDevices.speed(nic), "no speed file");
        Files.writeString(nic.resolve("speed"), "-1\n");
        assertEquals(SocketDevices.DEFAULT_SPEED_MBPS, SocketDevices.speed(nic), "virtual NICs report -1");
        Files.writeString(nic.resolve("speed"), "100000\n");
        assertEquals(100_000, SocketDevices.speed(nic));
        assertNull(SocketDevices.pciPath(nic), "no device link: a virtual interface");
        Path pci = Files.createDirectories(sys.resolve("devices/pci0000:00/0000:00:03.0"));
        Files.createSymbolicLink(nic.resolve("device"), pci);
        assertEquals(pci.toRealPath().toString(), SocketDevices.pciPath(nic));
    }
}
