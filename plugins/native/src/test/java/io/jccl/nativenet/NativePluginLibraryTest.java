package io.jccl.nativenet;

import io.jccl.spi.NetException;
import io.jccl.spi.NetResult;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Opening libraries by NCCL's rules. The data path of the host is tested against a real plugin in
 * plugins/shim (RoundTripTest), which loads JCCL's own shim through this host.
 */
class NativePluginLibraryTest {

    @Test
    void aMissingLibraryIsReportedWithTheLinkersMessage() {
        NetException e = assertThrows(NetException.class, () -> NativePluginLibrary.open("/nonexistent/libx.so"));
        assertEquals(NetResult.SYSTEM_ERROR, e.result());
        assertTrue(e.getMessage().contains("/nonexistent/libx.so") && e.getMessage().contains("No such file"),
                e.getMessage());
    }

    @Test
    void aBareNameIsAlsoTriedAsLibncclNetNameSo() {
        NetException e = assertThrows(NetException.class, () -> NativePluginLibrary.open("nosuchplugin"));
        assertTrue(e.getMessage().contains("libnccl-net-nosuchplugin.so"), e.getMessage());
    }

    @Test
    void aLibraryWithoutPluginSymbolsIsNotAPlugin() throws Exception {
        HostSupport.get();
        Path support = Path.of("target/classes/META-INF/native/linux-" + System.getProperty("os.arch"),
                HostSupport.LIBRARY).toAbsolutePath();
        assertTrue(Files.isRegularFile(support), support + " is built by this module");
        NetException e = assertThrows(NetException.class, () -> NativePluginLibrary.open(support.toString()));
        assertEquals(NetResult.INVALID_USAGE, e.result());
        assertTrue(e.getMessage().contains("exports no ncclNetPlugin_v6..v12"), e.getMessage());
    }

    @Test
    void ncclNetPluginIsReadAsNcclReadsIt() {
        assertEquals(List.of(), NativePluginSource.parse("none"));
        assertEquals(List.of(), NativePluginSource.parse(" NONE "));
        assertEquals(List.of("a", "/b/libc.so", "d"), NativePluginSource.parse("a, /b/libc.so,,d"));
    }

    @Test
    void anExplicitLibraryThatDoesNotLoadIsAProblemOfTheSource() {
        NativePluginSource source = NativePluginSource.of(List.of("/nonexistent/libnccl-net.so"));
        NetException e = assertThrows(NetException.class, source::netPlugins);
        assertTrue(e.getMessage().contains("/nonexistent/libnccl-net.so"), e.getMessage());
    }
}
