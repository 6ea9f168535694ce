package io.jccl.net.ib;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code NCCL_IB_HCA}: which device ports to use, in NCCL's syntax.
 *
 * <p>A comma-separated list of {@code name[:port]} entries ({@code mlx5_0:1,mlx5_1}). A name matches
 * device names that start with it ({@code mlx5_1} also matches {@code mlx5_10}) unless the list
 * starts with {@code =}, which asks for exact names. A list that starts with {@code ^} excludes the
 * listed ports instead of selecting them ({@code ^=mlx5_0} combines both). An entry without a port
 * covers every port of the device. NCCL's further {@code :rail:plane} fields are accepted and
 * ignored. An empty or unset variable selects everything.
 */
public final class HcaFilter {
    private record Entry(String name, int port) {
    }

    private final List<Entry> entries;
    private final boolean exclude;
    private final boolean exact;
    private final String text;

    private HcaFilter(List<Entry> entries, boolean exclude, boolean exact, String text) {
        this.entries = entries;
        this.exclude = exclude;
        this.exact = exact;
        this.text = text;
    }

    /**
     * @param text the variable's value; {@code null} or blank selects every port
     * @return the filter
     * @throws IllegalArgumentException for a malformed port number
     */
    public static HcaFilter parse(String text) {
        if (text == null || text.isBlank()) {
            return new HcaFilter(List.of(), false, false, "");
        }
        String s = text.trim();
        boolean exclude = false;
        boolean exact = false;
        if (s.startsWith("^")) {
            exclude = true;
            s = s.substring(1);
        }
        if (s.startsWith("=")) {
            exact = true;
            s = s.substring(1);
        }
        List<Entry> entries = new ArrayList<>();
        for (String item : s.split(",")) {
            String e = item.trim();
            if (e.isEmpty()) {
                continue;
            }
            String[] parts = e.split(":");
            int port = -1;
            if (parts.length > 1 && !parts[1].isEmpty()) {
                try {
                    port = Integer.parseInt(parts[1].trim());
                } catch (NumberFormatException ex) {
                    throw new IllegalArgumentException(IbConfig.NCCL_IB_HCA + "=" + text + ": '" + parts[1]
                            + "' is not a port number", ex);
                }
                if (port < 1 || port > 255) {
                    throw new IllegalArgumentException(IbConfig.NCCL_IB_HCA + "=" + text + ": port " + port
                            + " is out of range [1, 255]");
                }
            }
            entries.add(new Entry(parts[0].trim(), port));
        }
        return new HcaFilter(List.copyOf(entries), exclude, exact, text.trim());
    }

    /**
     * @param device a device name such as {@code mlx5_0} or {@code rxe0}
     * @param port   a port number (from 1)
     * @return whether the transport should use this port
     */
    public boolean accepts(String device, int port) {
        if (entries.isEmpty()) {
            return true;
        }
        boolean listed = false;
        for (Entry e : entries) {
            boolean nameMatches = exact ? device.equals(e.name) : device.startsWith(e.name);
            if (nameMatches && (e.port < 0 || e.port == port)) {
                listed = true;
                break;
            }
        }
        return listed != exclude;
    }

    /** @return whether the filter selects every port */
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    @Override
    public String toString() {
        return text.isEmpty() ? "(all)" : text;
    }
}
