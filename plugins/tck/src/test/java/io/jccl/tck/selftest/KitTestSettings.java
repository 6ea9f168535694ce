package io.jccl.tck.selftest;

import io.jccl.tck.TckConfig;

/** How the kit's own tests configure the kit and JcclSocket (as system properties, unless already set). */
public final class KitTestSettings {
    private KitTestSettings() {
    }

    /**
     * <ul>
     *   <li>JcclSocket retries a refused connect as NCCL does, for about a minute; rule conn.8
     *       (optional) checks that the retries end in a NetException, so the kit's runs shorten them.</li>
     *   <li>The build machine is shared and often loaded: a call is called blocking after 2 s rather
     *       than 1 s. The defects the kit's tests plant block for ever, so they are caught either way.</li>
     * </ul>
     */
    public static void apply() {
        setIfAbsent("NCCL_SOCKET_RETRY_CNT", "3");
        setIfAbsent(TckConfig.JCCL_TCK_CALL_BOUND_MS, "2000");
    }

    private static void setIfAbsent(String name, String value) {
        if (System.getProperty(name) == null && System.getenv(name) == null) {
            System.setProperty(name, value);
        }
    }
}
