package io.jccl.net.ib;

import io.jccl.spi.NetPlugin;
import io.jccl.tck.NetPluginTck;
import io.jccl.tck.TckConfig;
import org.junit.jupiter.api.Assumptions;

/**
 * Every rule of the conformance kit against JcclIB on a real verbs device (rxe0 in the SoftRoCE VM
 * in CI); every rule is skipped with {@link IbNetPlugin#unavailabilityCause()} where there is
 * none. Rule fault.2 kills a second JVM that holds the other end.
 *
 * <p>The VM emulates its CPU (TCG, 4 to 20 times slower than the host), so the kit's bounds are
 * scaled by {@code JCCL_TCK_TIMEOUT_SCALE} 8 unless set; JcclIB's own bound on a dead peer stays
 * at its default (5 s), below the kit's.
 */
@RequiresRdma(perTest = false)
class IbConformanceTest extends NetPluginTck {
    static {
        if (System.getProperty(TckConfig.JCCL_TCK_TIMEOUT_SCALE) == null
                && System.getenv(TckConfig.JCCL_TCK_TIMEOUT_SCALE) == null) {
            System.setProperty(TckConfig.JCCL_TCK_TIMEOUT_SCALE, "8");
        }
    }

    @Override
    protected NetPlugin createPlugin() {
        Throwable cause = IbNetPlugin.unavailabilityCause();
        Assumptions.assumeTrue(cause == null, () -> "no RDMA device here: " + cause);
        return new IbNetPlugin();
    }
}
