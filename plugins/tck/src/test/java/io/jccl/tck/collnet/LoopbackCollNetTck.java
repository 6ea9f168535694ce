package io.jccl.tck.collnet;

import io.jccl.spi.CollNetPlugin;
import io.jccl.tck.CollNetPluginTck;

/**
 * The CollNet rules against {@link LoopbackCollNet} with one {@link CollDefect}, named by the
 * configuration parameter {@value #DEFECT}; run by {@link CollNetRulesCatchDefectsTest}.
 */
public class LoopbackCollNetTck extends CollNetPluginTck {
    static final String DEFECT = "jccl.tck.selftest.colldefect";

    @Override
    protected CollNetPlugin createPlugin() {
        return CollDefect.valueOf(configurationParameter(DEFECT)).wrap(new LoopbackCollNet());
    }
}
