package io.jccl.tck.selftest;

import io.jccl.net.socket.SocketNetPlugin;
import io.jccl.spi.NetPlugin;
import io.jccl.tck.NetPluginTck;
import io.jccl.tck.PeerTransport;

import java.util.Optional;

/**
 * The kit against JcclSocket with one {@link Defect}, named by the configuration parameter
 * {@value #DEFECT}. Run by {@link BrokenTransportsAreCaughtTest} through the kit's runner, never
 * on its own (its name keeps surefire away).
 */
public class BrokenSocketTck extends NetPluginTck {
    static final String DEFECT = "jccl.tck.selftest.defect";

    static {
        KitTestSettings.apply();
    }

    @Override
    protected NetPlugin createPlugin() {
        return Defect.valueOf(configurationParameter(DEFECT)).wrap(new SocketNetPlugin());
    }

    /** The peer that gets killed is a healthy JcclSocket; the defect is on the surviving side. */
    @Override
    protected Optional<PeerTransport> peerTransport() {
        return Optional.of(PeerTransport.byClass(SocketNetPlugin.class));
    }
}
