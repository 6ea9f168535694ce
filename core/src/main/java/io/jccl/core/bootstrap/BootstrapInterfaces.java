package io.jccl.core.bootstrap;

import io.jccl.core.config.CoreConfig;
import io.jccl.spi.config.Env;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

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
        int family = family(Env.get(CoreConfig.SOCKET_FAMILY));
        List<String[]> tiers = new ArrayList<>();
        if (ifname != null && ifname.length() > 1) {
            tiers.add(new String[] {ifname});
        } else {
            tiers.add(new String[] {"ib"});
            tiers.add(new String[] {"^docker,lo,virbr"});
            tiers.add(new String[] {"docker"});
            tiers.add(new String[] {"lo"});
            tiers.add(new String[] {"virbr"});
        }
        List<NetworkInterface> up = new ArrayList<>();
        try {
            for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (nif.isUp()) {
                    up.add(nif);
                }
            }
        } catch (SocketException e) {
            throw new IllegalStateException("cannot list network interfaces: " + e.getMessage(), e);
        }
        for (String[] tier : tiers) {
            for (NetworkInterface nif : up) {
                if (accepts(tier[0], nif.getName())) {
                    InetAddress a = pick(nif, family);
                    if (a != null) {
                        return a;
                    }
                }
            }
        }
        throw new IllegalStateException("no network interface for the bootstrap"
                + (ifname == null ? "" : " matches " + CoreConfig.SOCKET_IFNAME + "=" + ifname)
                + (family == 0 ? "" : " with an IPv" + family + " address"));
    }

    private static int family(String value) {
        if (value == null) {
            return 0;
        }
        return switch (value.trim().toUpperCase(Locale.ROOT)) {
            case "AF_INET", "INET", "4", "IPV4" -> 4;
            case "AF_INET6", "INET6", "6", "IPV6" -> 6;
            default -> throw new IllegalArgumentException(CoreConfig.SOCKET_FAMILY + "=" + value
                    + " is not AF_INET or AF_INET6");
        };
    }

    private static InetAddress pick(NetworkInterface nif, int family) {
        InetAddress v6 = null;
        for (InetAddress a : Collections.list(nif.getInetAddresses())) {
            if (a instanceof Inet4Address && family != 6) {
                return a;
            }
            if (a instanceof Inet6Address && family != 4 && !a.isLinkLocalAddress() && !a.isLoopbackAddress()
                    && v6 == null) {
                v6 = a;
            }
        }
        return v6;
    }

    /** The syntax of {@code NCCL_SOCKET_IFNAME}. */
    static boolean accepts(String spec, String name) {
        String s = spec.trim();
        boolean exclude = s.startsWith("^");
        if (exclude) {
            s = s.substring(1);
        }
        boolean exact = s.startsWith("=");
        if (exact) {
            s = s.substring(1);
        }
        boolean listed = false;
        for (String part : s.split(",")) {
            String p = part.trim();
            int colon = p.indexOf(':');
            if (colon >= 0) {
                p = p.substring(0, colon);
            }
            if (!p.isEmpty() && (exact ? name.equals(p) : name.startsWith(p))) {
                listed = true;
            }
        }
        return exclude != listed;
    }
}
