package io.jccl.cli;

import io.jccl.nativenet.NativeNetPlugin;
import io.jccl.nativenet.NativePluginSource;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.log.DebugLogger;

import java.util.List;
import java.util.Locale;

/**
 * The check of {@code jccl package}, run in a child JVM whose class path holds the native host and
 * the spi only: loads the packaged library through the native host as {@code jccl plugins --plugin}
 * does, initialises its ncclNet and prints its name and devices. The last line of a failed check
 * starts with {@link #FAILED}; exit status 0 if the plugin is the expected transport with at least
 * one device, 1 otherwise.
 */
final class PackageCheck {
    static final String FAILED = "FAILED: ";

    private PackageCheck() {
    }

    /** @param args the library and the transport name it must report */
    public static void main(String[] args) {
        String library = args[0];
        String expected = args[1];
        try {
            List<NetPlugin> nets = NativePluginSource.of(List.of(library)).netPlugins();
            if (nets.isEmpty()) {
                fail(library + " exports no ncclNetPlugin_vN");
            }
            NetPlugin plugin = nets.get(0);
            String version = plugin instanceof NativeNetPlugin n ? "v" + n.apiVersion().number() : "?";
            System.out.println("transport:\t" + plugin.name() + " (ncclNet " + version + ", native plugin)");
            if (!plugin.name().equalsIgnoreCase(expected)) {
                fail(library + " reports the transport " + plugin.name() + ", not " + expected
                        + " (is the package file beside it?)");
            }
            plugin.init(DebugLogger.fromEnvironment());
            int devices = plugin.devices();
            System.out.println("devices:\t" + devices);
            for (int dev = 0; dev < devices; dev++) {
                NetProperties p = plugin.getProperties(dev);
                System.out.println(String.format(Locale.ROOT, "dev %d:\t\t%s, %d Mbps", dev, p.name(), p.speedMbps()));
            }
            if (devices == 0) {
                fail(plugin.name() + " initialised in " + library + " but reports no device");
            }
            System.out.flush();
            System.exit(0);
        } catch (NetException | RuntimeException | LinkageError e) {
            fail(library + ": " + e.getMessage());
        }
    }

    private static void fail(String why) {
        System.out.println(FAILED + why.lines().findFirst().orElse(why));
        System.out.flush();
        System.exit(1);
    }
}
