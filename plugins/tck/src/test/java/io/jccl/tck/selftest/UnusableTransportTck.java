package io.jccl.tck.selftest;

import io.jccl.spi.ForwardingNetPlugin;
import io.jccl.net.socket.SocketNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.tck.NetPluginTck;

/**
 * The kit against a JcclSocket that fails the set-up NCCL performs before any connection, in the
 * way the configuration parameter {@value #FAULT} names: {@code init} (init throws),
 * {@code devices} (0 devices), {@code properties} (getProperties throws). Run by
 * {@link PreconditionsAreOneVerdictTest} through the runner, never on its own (its name keeps
 * surefire away).
 */
public class UnusableTransportTck extends NetPluginTck {
    static final String FAULT = "jccl.tck.selftest.unusable";

    static {
        KitTestSettings.apply();
    }

    @Override
    protected NetPlugin createPlugin() {
        String fault = configurationParameter(FAULT);
        return new ForwardingNetPlugin(new SocketNetPlugin()) {
            @Override
            public String name() {
                return "Unusable";
            }

            @Override
            public void init(NetLogger logger) throws NetException {
                if (fault.equals("init")) {
                    throw NetException.systemError("no interface to use");
                }
                super.init(logger);
            }

            @Override
            public int devices() throws NetException {
                return fault.equals("devices") ? 0 : super.devices();
            }

            @Override
            public NetProperties getProperties(int dev) throws NetException {
                if (fault.equals("properties")) {
                    throw NetException.internalError("cannot read the link speed");
                }
                return super.getProperties(dev);
            }
        };
    }
}
