package io.jccl.cli;

import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.discovery.NetPluginDiscovery;
import io.jccl.spi.discovery.ScriptedNetPlugin;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PluginsCommandTest {

    private record Run(int exitCode, String output) {
    }

    private static Run run(NetPluginDiscovery discovery, String... args) {
        StringWriter text = new StringWriter();
        CommandLine cmd = new CommandLine(new PluginsCommand(() -> discovery, NetLogger::noop));
        cmd.setOut(new PrintWriter(text));
        int rc = cmd.execute(args);
        return new Run(rc, text.toString());
    }

    @Test
    void listsEveryTransportWithItsDevicesAndTheSelection() {
        NetPluginDiscovery d = NetPluginDiscovery.builder()
                .add(new ScriptedNetPlugin("Verbs", 1, NetException.systemError("no RDMA device")))
                .add(new ScriptedNetPlugin("Tcp", 2, null)).build();
        Run r = run(d);
        assertEquals(0, r.exitCode(), r.output());
        String out = r.output();
        assertTrue(out.contains("transport:\tVerbs\n"), out);
        assertTrue(out.contains("\tstate:          unavailable: ncclSystemError: no RDMA device\n"), out);
        assertTrue(out.contains("transport:\tTcp\n"), out);
        assertTrue(out.contains("\tdevices:        2\n"), out);
        assertTrue(out.contains("\tdev 0:          Tcp0\n"), out);
        assertTrue(out.contains("\tdev 1:          Tcp1\n"), out);
        assertTrue(out.contains("\t\tptr_support:    HOST\n"), out);
        assertTrue(out.contains("\t\tspeed:          10000 Mbps\n"), out);
        assertTrue(out.contains("\t\tpci_path:       (virtual)\n"), out);
        assertTrue(out.contains("selected:\tTcp\t(first usable transport (NCCL_NET unset))"), out);
    }

    @Test
    void filtersByNameAndFailsWhenNothingIsUsable() {
        NetPluginDiscovery d = NetPluginDiscovery.builder()
                .add(new ScriptedNetPlugin("Verbs", 1, NetException.systemError("no RDMA device")))
                .add(new ScriptedNetPlugin("Tcp", 2, null)).build();
        Run verbs = run(d, "--net", "verbs");
        assertEquals(1, verbs.exitCode(), verbs.output());
        assertFalse(verbs.output().contains("Tcp"), verbs.output());

        Run none = run(NetPluginDiscovery.builder().build());
        assertEquals(1, none.exitCode());
        assertTrue(none.output().startsWith("No transport found."), none.output());
    }
}
