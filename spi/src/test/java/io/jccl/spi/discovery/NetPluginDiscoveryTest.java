package io.jccl.spi.discovery;

import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetResult;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class NetPluginDiscoveryTest {
    private final NetLogger log = NetLogger.noop();

    @Test
    void selectsByNameCaseInsensitivelyAsNcclNetDoes() throws NetException {
        ScriptedNetPlugin a = new ScriptedNetPlugin("Alpha", 1, null);
        ScriptedNetPlugin b = new ScriptedNetPlugin("JcclSocket", 2, null);
        NetPluginDiscovery d = NetPluginDiscovery.builder().add(a).add(b).build();

        NetSelection s = d.selectNet("jcclsocket", log);
        assertSame(b, s.plugin());
        assertEquals(2, s.devices());
        assertEquals(0, a.initCalls, "a transport not named is never initialised");
    }

    @Test
    void unknownNameFailsWithTheListOfAvailableTransports() {
        NetPluginDiscovery d = NetPluginDiscovery.builder()
                .add(new ScriptedNetPlugin("Alpha", 1, null))
                .add(new ScriptedNetPlugin("Beta", 1, null)).build();
        NetException e = assertThrows(NetException.class, () -> d.selectNet("Gamma", log));
        assertSame(NetResult.INVALID_USAGE, e.result());
        assertEquals("NCCL_NET=Gamma matches no transport; available: Alpha, Beta", e.getMessage());
    }

    @Test
    void withoutANameTakesTheFirstThatInitialisesWithDevices() throws NetException {
        ScriptedNetPlugin broken = new ScriptedNetPlugin("Verbs", 1, NetException.systemError("no HCA"));
        ScriptedNetPlugin empty = new ScriptedNetPlugin("Empty", 0, null);
        ScriptedNetPlugin good = new ScriptedNetPlugin("Good", 3, null);
        ScriptedNetPlugin later = new ScriptedNetPlugin("Later", 1, null);
        NetPluginDiscovery d = NetPluginDiscovery.builder().add(broken).add(empty).add(good).add(later).build();

        NetSelection s = d.selectNet((String) null, log);
        assertSame(good, s.plugin());
        assertEquals(List.of("Verbs: init failed: ncclSystemError: no HCA", "Empty: no devices"), s.skipped());
        assertEquals(1, broken.closeCalls, "transports tried and not chosen are closed");
        assertEquals(1, empty.closeCalls);
        assertEquals(0, good.closeCalls);
        assertEquals(0, later.initCalls);
    }

    @Test
    void aNamedTransportThatCannotInitialiseFailsWithItsReason() {
        NetPluginDiscovery d = NetPluginDiscovery.builder()
                .add(new ScriptedNetPlugin("Verbs", 1, NetException.systemError("no HCA"))).build();
        NetException e = assertThrows(NetException.class, () -> d.selectNet("verbs", log));
        assertEquals("NCCL_NET=verbs could not be initialised: Verbs: init failed: ncclSystemError: no HCA",
                e.getMessage());
    }

    @Test
    void nothingUsableFailsWithEveryReason() {
        NetPluginDiscovery d = NetPluginDiscovery.builder().add(new ScriptedNetPlugin("Empty", 0, null)).build();
        NetException e = assertThrows(NetException.class, () -> d.selectNet((String) null, log));
        assertEquals("no transport could be initialised: Empty: no devices", e.getMessage());
        NetException none = assertThrows(NetException.class,
                () -> NetPluginDiscovery.builder().build().selectNet((String) null, log));
        assertTrue(none.getMessage().startsWith("no transport found"), none.getMessage());
    }

    @Test
    void serviceLoaderFindsClassPathProvidersAndRecordsBrokenOnes() {
        NetPluginDiscovery d = NetPluginDiscovery.builder()
                .serviceLoader(getClass().getClassLoader()).build();
        assertEquals(List.of("ServiceLoadedNet"), d.netPlugins().stream().map(NetPlugin::name).toList());
        assertEquals(1, d.problems().size(), d.problems().toString());
        assertTrue(d.problems().get(0).contains("FailsToConstruct"), d.problems().toString());
        assertTrue(d.findNet("serviceloadednet").isPresent());
    }

    @Test
    void sourcesComeAfterExplicitTransportsAndBeforeServiceLoader() throws NetException {
        ScriptedNetPlugin explicit = new ScriptedNetPlugin("Explicit", 0, null);
        ScriptedNetPlugin fromSource = new ScriptedNetPlugin("Native", 1, null);
        List<String> described = new ArrayList<>();
        NetPluginSource source = new NetPluginSource() {
            @Override
            public String description() {
                described.add("asked");
                return "test source";
            }

            @Override
            public List<NetPlugin> netPlugins() {
                return List.of(fromSource);
            }
        };
        NetPluginSource failing = new NetPluginSource() {
            @Override
            public String description() {
                return "libnccl-net-missing.so";
            }

            @Override
            public List<NetPlugin> netPlugins() throws NetException {
                throw NetException.systemError("dlopen failed");
            }

            @Override
            public List<CollNetPlugin> collNetPlugins() {
                return List.of();
            }
        };
        NetPluginDiscovery d = NetPluginDiscovery.builder().add(explicit).addSource(source).addSource(failing)
                .serviceLoader(getClass().getClassLoader()).build();
        assertEquals(List.of("Explicit", "Native", "ServiceLoadedNet"),
                d.netPlugins().stream().map(NetPlugin::name).toList());
        assertTrue(d.problems().contains("libnccl-net-missing.so: ncclSystemError: dlopen failed"),
                d.problems().toString());
        assertSame(fromSource, d.selectNet((String) null, log).plugin());
    }
}
