package io.jccl.cli;

import io.jccl.core.topology.NicChoice;
import io.jccl.core.topology.SysfsTopology;
import io.jccl.core.topology.Topology;
import io.jccl.core.topology.TopologyXml;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code jccl topo}: the machine's topology as JCCL (and NCCL) see it: CPUs, GPUs, NICs, which NIC
 * each GPU uses and how far it is; {@code --xml} writes NCCL's topology XML, {@code --file} reads one.
 */
@Command(name = "topo",
        mixinStandardHelpOptions = true,
        description = {"Prints the machine's topology (read from sysfs, or from NCCL topology XML with --file or "
                + "NCCL_TOPO_FILE): its CPUs (NUMA nodes), GPUs and NICs, and the NIC each GPU uses with the PCI path "
                + "type between them (PIX, PXB, PHB, SYS), as NCCL chooses.",
                "Exit status: 0, or 2 if the file is not NCCL topology XML."})
final class TopoCommand implements Callable<Integer> {

    @Option(names = {"-f", "--file"}, paramLabel = "XML",
            description = "Read this NCCL topology XML instead of sysfs (default: NCCL_TOPO_FILE if set).")
    private Path file;

    @Option(names = {"-x", "--xml"}, paramLabel = "FILE",
            description = "Also write the topology as NCCL's XML to FILE (what NCCL_TOPO_DUMP_FILE writes); - for "
                    + "standard output.")
    private String xml;

    @Spec
    private CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Path source = file;
        String env = System.getenv("NCCL_TOPO_FILE");
        if (source == null && env != null && !env.isBlank()) {
            source = Path.of(env);
        }
        Topology t;
        try {
            t = source != null ? TopologyXml.read(source) : SysfsTopology.detect();
        } catch (IllegalArgumentException | UncheckedIOException e) {
            err.println("jccl topo: " + e.getMessage());
            return 2;
        }
        if ("-".equals(xml)) {
            out.print(TopologyXml.toXml(t));
            out.flush();
            return 0;
        }
        out.printf("# topology of %s%n", source != null ? source : "this machine (sysfs)");
        out.print(t.describe());
        int numa = NicChoice.boundNumaNode();
        out.printf("# this process: %s%n", numa < 0 ? "not bound to one NUMA node (rings use every NIC)"
                : "bound to NUMA node " + numa);
        if (xml != null) {
            try {
                TopologyXml.write(t, Path.of(xml));
            } catch (UncheckedIOException e) {
                err.println("jccl topo: " + e.getMessage());
                return 2;
            }
            out.printf("# wrote %s%n", xml);
        }
        out.flush();
        return 0;
    }
}
