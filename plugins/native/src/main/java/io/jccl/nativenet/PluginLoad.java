package io.jccl.nativenet;

import io.jccl.spi.NetException;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What NCCL keeps about one function table of a loaded plugin library (its per-library plugin
 * state, spec 4.3), shared by every {@link NativeNetPlugin} or {@link NativeCollNetPlugin} over that
 * table however often the library is opened, since {@code dlopen} returns the same library:
 * <ul>
 *   <li>a table whose {@code init} or {@code devices} failed, or that reported no device, is
 *       disabled for the life of the process: NCCL never calls it again, and neither does the host;</li>
 *   <li>before v11, the plugin's own {@code init} runs once per load (NCCL's compat layer counts
 *       references, spec 4.5), however many communicators (here: plugin objects) initialise it.</li>
 * </ul>
 * Callers hold the lock of this object around init, so that two plugin objects of one table never
 * run the plugin's {@code init} at once.
 */
final class PluginLoad {
    private static final Map<Long, PluginLoad> TABLES = new ConcurrentHashMap<>();

    private NetException disabled;
    private boolean noDevices;
    private boolean legacyInitDone;

    private PluginLoad() {
    }

    /** @return the state of the table at this address */
    static PluginLoad of(long table) {
        return TABLES.computeIfAbsent(table, t -> new PluginLoad());
    }

    /** @return why the table is disabled, or {@code null}; guarded by this object */
    NetException disabled() {
        return disabled;
    }

    /** @return whether the table reported no device, which disables it without an error */
    boolean noDevices() {
        return noDevices;
    }

    /** Disables the table for good; @return {@code why}, to throw */
    NetException disable(NetException why) {
        if (disabled == null) {
            disabled = why;
        }
        return why;
    }

    /** Disables the table for good because it has no device. */
    void disableForNoDevices() {
        noDevices = true;
    }

    /** @return whether a pre-v11 plugin's own init already ran successfully in this process */
    boolean legacyInitDone() {
        return legacyInitDone;
    }

    void legacyInitSucceeded() {
        legacyInitDone = true;
    }

    /**
     * @return an exception for a call refused because the table is disabled: the same result code
     *         and first failure, naming the refused call
     */
    static NetException refused(String plugin, String call, NetException why) {
        return new NetException(why.result(), plugin + ": " + call + " not called, because the plugin is disabled "
                + "(as NCCL disables it) after: " + why.getMessage());
    }
}
