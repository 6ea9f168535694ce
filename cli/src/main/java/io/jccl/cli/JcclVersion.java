package io.jccl.cli;

import io.jccl.spi.NetPlugin;
import picocli.CommandLine.IVersionProvider;

/** {@code jccl --version}: the build's version, the SPI's ABI version and the JVM. */
final class JcclVersion implements IVersionProvider {
    @Override
    public String[] getVersion() {
        String v = Jccl.class.getPackage().getImplementationVersion();
        return new String[] {
            "jccl " + (v == null ? "(development build)" : v),
            "SPI: ncclNet/ncclCollNet " + NetPlugin.API_VERSION.name().toLowerCase(java.util.Locale.ROOT),
            "JVM: " + System.getProperty("java.vm.name") + " " + Runtime.version()
        };
    }
}
