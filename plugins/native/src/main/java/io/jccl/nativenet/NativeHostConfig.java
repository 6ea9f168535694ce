package io.jccl.nativenet;

import io.jccl.spi.config.EnvVar;

/** The variables the native-plugin host reads. */
public final class NativeHostConfig {
    private NativeHostConfig() {
    }

    @EnvVar(defaultValue = "",
            description = "Native ncclNet plugins that Java loads too (jccl plugins, jccl tck, the engine), by NCCL's "
                    + "rules: a comma list of paths or names (NAME means libnccl-net-NAME.so), none for none; unset: "
                    + "libnccl-net.so if the library path has one.")
    public static final String NCCL_NET_PLUGIN = "NCCL_NET_PLUGIN";
}
