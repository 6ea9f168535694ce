package io.jccl.core.bootstrap;

import io.jccl.core.config.CoreConfig;
import io.jccl.spi.config.Env;
import io.jccl.spi.config.InterfaceFilter;

import java.net.InetAddress;

/**
 * Picks the address the bootstrap listens on, with NCCL's rules ({@code ncclFindInterfaces}):
 * {@code NCCL_SOCKET_IFNAME} if set (prefixes, {@code ^} to exclude, {@code =} for exact names),
 * else {@code ib*}, else any interface but {@code lo}, {@code docker*} and {@code virbr*}, else
 * {@code docker*}, else {@code lo}, else {@code virbr*}; {@code NCCL_SOCKET_FAMILY} restricts the
 * address family.
 */
public final class BootstrapInterfaces {
    private BootstrapInterfaces() {
    }

    /**
     * @return the address to listen on
     * @throws IllegalStateException naming the variables if no interface qualifies
     */
    public static InetAddress localAddress() {
        String ifname = Env.get(CoreConfig.SOCKET_IFNAME);
        int family = InterfaceFilter.family(Env.get(CoreConfig.SOCKET_FAMILY));
        InetAddress a = InterfaceFilter.firstAddress(ifname, family);
        if (a == null) {
            throw new IllegalStateException("no network interface for the bootstrap"
                    + (ifname == null ? "" : " matches " + CoreConfig.SOCKET_IFNAME + "=" + ifname)
                    + (family == 0 ? "" : " with an IPv" + family + " address"));
        }
        return a;
    }
}
