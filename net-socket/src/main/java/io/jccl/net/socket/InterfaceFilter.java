package io.jccl.net.socket;

import java.util.ArrayList;
import java.util.List;

/**
 * The syntax of {@code NCCL_SOCKET_IFNAME}: a comma list of interface-name prefixes; a leading
 * {@code ^} turns it into an exclude list, a leading {@code =} (after any {@code ^}) makes the
 * names exact. Entries may carry a {@code :port} suffix, which is ignored here as in NCCL.
 */
final class InterfaceFilter {
    private final boolean exclude;
    private final boolean exact;
    private final List<String> names;

    private InterfaceFilter(boolean exclude, boolean exact, List<String> names) {
        this.exclude = exclude;
        this.exact = exact;
        this.names = names;
    }

    /** @param spec a {@code NCCL_SOCKET_IFNAME} value such as {@code eth,ib}, {@code ^docker} or {@code =eth0} */
    static InterfaceFilter parse(String spec) {
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
    boolean accepts(String interfaceName) {
        boolean listed = names.stream().anyMatch(n -> exact ? interfaceName.equals(n) : interfaceName.startsWith(n));
        return exclude != listed;
    }
}
