package io.jccl.tck.selftest;

/** How the kit's tests configure JcclSocket. */
public final class SocketTestSettings {
    private SocketTestSettings() {
    }

    /**
     * JcclSocket retries a refused connect as NCCL does, for about a minute; rule conn.8 (optional)
     * checks that the retries end in a NetException, so the kit's runs shorten them.
     */
    public static void apply() {
        if (System.getProperty("NCCL_SOCKET_RETRY_CNT") == null) {
            System.setProperty("NCCL_SOCKET_RETRY_CNT", "3");
        }
    }
}
