package io.jccl.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code jccl topo}: this machine's topology, NCCL topology XML read with --file and written with --xml. */
class TopoCommandTest {
    private static final String SERVER = """
            <system version="1">
              <cpu numaid="0" arch="x86_64">
                <pci busid="0000:01:00.0" class="0x060400" vendor="0x1000" device="0xc010">
                  <pci busid="0000:02:00.0" class="0x030200" vendor="0x10de" device="0x2330">
                    <gpu dev="0" sm="90" rank="0" gdr="1"/>
                  </pci>
                  <pci busid="0000:03:00.0" class="0x020700" vendor="0x15b3" device="0x1021">
                    <nic>
                      <net name="mlx5_0" dev="0" speed="400000" port="1"/>
                    </nic>
                  </pci>
                </pci>
              </cpu>
            </system>
            """;

    private record Run(int exitCode, String out, String err) {
    }

    private static Run jccl(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Jccl.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int rc = cl.execute(args);
        return new Run(rc, out.toString(), err.toString());
    }

    @Test
    void aTopologyFileIsDescribedAndWrittenBackAsNcclXml(@TempDir Path dir) throws IOException {
        Path in = Files.writeString(dir.resolve("server.xml"), SERVER);
        Path dump = dir.resolve("dump.xml");
        Run r = jccl("topo", "--file", in.toString(), "--xml", dump.toString());
        assertEquals(0, r.exitCode(), r.out() + r.err());
        assertTrue(r.out().contains("GPU 0 0000:02:00.0 NUMA 0 sm 90 -> NIC mlx5_0 (PIX)"), r.out());
        assertTrue(r.out().contains("NIC mlx5_0 0000:03:00.0 NUMA 0 speed 400000 Mb/s"), r.out());
        assertEquals(SERVER, Files.readString(dump));
    }

    @Test
    void thisMachineIsReadFromSysfsAndABadFileIsOneLine(@TempDir Path dir) throws IOException {
        Run here = jccl("topo");
        assertEquals(0, here.exitCode(), here.out() + here.err());
        assertTrue(here.out().startsWith("# topology of this machine (sysfs)"), here.out());
        Path bad = Files.writeString(dir.resolve("bad.xml"), "<system");
        Run r = jccl("topo", "-f", bad.toString());
        assertEquals(2, r.exitCode());
        assertTrue(r.err().startsWith("jccl topo: " + bad + ", line 1: not NCCL topology XML"), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
    }
}
