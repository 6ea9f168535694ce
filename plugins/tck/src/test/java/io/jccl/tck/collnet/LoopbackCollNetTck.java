package io.jccl.tck.collnet;

import io.jccl.spi.CollNetPlugin;
import io.jccl.tck.CollNetPluginTck;
import io.jccl.tck.selftest.KitTestSettings;

/**
 * The CollNet rules against {@link LoopbackCollNet} with one {@link CollDefect}, named by the
 * configuration parameter {@value #DEFECT}; run by {@link CollNetRulesCatchDefectsTest}.
 */
public class LoopbackCollNetTck extends CollNetPluginTck {
    static final String DEFECT = "jccl.tck.selftest.colldefect";

    static {
        KitTestSettings.apply();
    }

    @Override
    protected CollNetPlugin createPlugin() {
        return CollDefect.valueOf(configurationParameter(DEFECT)).wrap(new LoopbackCollNet());
    }
}
