package io.jccl.spi.config;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The syntax of {@code NCCL_SOCKET_IFNAME}: a comma list of interface-name prefixes; a leading
 * {@code ^} turns it into an exclude list, a leading {@code =} (after any {@code ^}) makes the
 * names exact. Entries may carry a {@code :port} suffix, which is ignored here as in NCCL. Shared
 * by the transports that open TCP sockets, so that one setting picks their interfaces alike.
 */
public final class InterfaceFilter {
    @EnvVar(defaultValue = "",
            description = "Interfaces for JcclSocket and JcclCollNet, as NCCL reads it: comma list of prefixes, ^ to "
                    + "exclude, = for exact names; unset: ib* first, else any but lo/docker*/virbr*, else those.")
    public static final String NCCL_SOCKET_IFNAME = "NCCL_SOCKET_IFNAME";

    /** NCCL's order when NCCL_SOCKET_IFNAME is unset: the first tier with an interface wins. */
    private static final List<InterfaceFilter> DEFAULT_TIERS = List.of(parse("ib"), parse("^docker,lo,virbr"),
            parse("docker"), parse("lo"), parse("virbr"));

    private final boolean exclude;
    private final boolean exact;
    private final List<String> names;

    private InterfaceFilter(boolean exclude, boolean exact, List<String> names) {
        this.exclude = exclude;
        this.exact = exact;
        this.names = names;
    }

    /** @param spec a {@code NCCL_SOCKET_IFNAME} value such as {@code eth,ib}, {@code ^docker} or {@code =eth0} */
    public static InterfaceFilter parse(String spec) {
        String s = spec.trim();
        boolean exclude = s.startsWith("^");
        if (exclude) {
            s = s.substring(1);
        }
        boolean exact = s.startsWith("=");
        if (exact) {
            s = s.substring(1);
        }
        List<String> names = new ArrayList<>();
        for (String part : s.split(",")) {
            String name = part.trim();
            int colon = name.indexOf(':');
            if (colon >= 0) {
                name = name.substring(0, colon);
            }
            if (!name.isEmpty()) {
                names.add(name);
            }
        }
        return new InterfaceFilter(exclude, exact, List.copyOf(names));
    }

    /** @return whether an interface of this name is selected */
    public boolean accepts(String interfaceName) {
        boolean listed = names.stream().anyMatch(n -> exact ? interfaceName.equals(n) : interfaceName.startsWith(n));
        return exclude != listed;
    }

    /**
     * NCCL's selection among the interfaces that are up and have an address: those
     * {@code ifname} accepts, or with {@code ifname} unset the first non-empty tier of ib*,
     * anything but lo/docker*&#47;virbr*, docker*, lo, virbr*.
     *
     * @param candidates the interfaces, in the system's order
     * @param name       an interface's name
     * @param ifname     the NCCL_SOCKET_IFNAME value, or null
     * @return the chosen candidates, in their order
     */
    public static <T> List<T> choose(List<T> candidates, Function<T, String> name, String ifname) {
        if (ifname != null && ifname.length() > 1) {
            InterfaceFilter filter = parse(ifname);
            return candidates.stream().filter(c -> filter.accepts(name.apply(c))).toList();
        }
        for (InterfaceFilter tier : DEFAULT_TIERS) {
            List<T> found = candidates.stream().filter(c -> tier.accepts(name.apply(c))).toList();
            if (!found.isEmpty()) {
                return found;
            }
        }
        return List.of();
    }

    /**
     * @param value an {@code NCCL_SOCKET_FAMILY} value, or null
     * @return 4 for AF_INET, 6 for AF_INET6, 0 for either (unset)
     * @throws IllegalArgumentException for anything else
     */
    public static int family(String value) {
        if (value == null || value.isBlank()) {
            return 0;
        }
        return switch (value.trim().toUpperCase(Locale.ROOT)) {
            case "AF_INET", "INET", "4", "IPV4" -> 4;
            case "AF_INET6", "INET6", "6", "IPV6" -> 6;
            default -> throw new IllegalArgumentException("NCCL_SOCKET_FAMILY=" + value + " is not AF_INET or AF_INET6");
        };
    }

    /**
     * @param family 4, 6, or 0 for either
     * @return the interface's address to use: IPv4 first unless {@code family} says 6; never IPv6
     *         link-local or loopback; null if it has none
     */
    public static InetAddress pickAddress(NetworkInterface nif, int family) {
        InetAddress v6 = null;
        for (InetAddress a : Collections.list(nif.getInetAddresses())) {
            if (a instanceof Inet4Address && family != 6) {
                return a;
            }
            if (a instanceof Inet6Address && family != 4 && v6 == null && !a.isLinkLocalAddress()
                    && !a.isLoopbackAddress()) {
                v6 = a;
            }
        }
        return v6;
    }

    /**
     * @param ifname an NCCL_SOCKET_IFNAME value, or null for NCCL's default order
     * @param family 4, 6, or 0 for either
     * @return the address of the first interface that is up, chosen and has one; null if none
     * @throws IllegalStateException if the interfaces cannot be listed
     */
    public static InetAddress firstAddress(String ifname, int family) {
        record Up(String name, InetAddress address) {
        }
        List<Up> up = new ArrayList<>();
        try {
            for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                InetAddress a = nif.isUp() ? pickAddress(nif, family) : null;
                if (a != null) {
                    up.add(new Up(nif.getName(), a));
                }
            }
        } catch (SocketException e) {
            throw new IllegalStateException("cannot list network interfaces: " + e.getMessage(), e);
        }
        List<Up> chosen = choose(up, Up::name, ifname);
        return chosen.isEmpty() ? null : chosen.get(0).address();
    }
}
