package io.jccl.net.socket;

import jdk.net.ExtendedSocketOptions;

import java.io.IOException;
import java.nio.channels.NetworkChannel;
import java.time.Duration;

/**
 * TCP keep-alive probes sized to the failure bound, through {@code jdk.net}. The module is optional
 * ({@code requires static}): a jlink'ed runtime may leave it out, and then this class is never
 * loaded ({@code SocketNetPlugin} asks first, without naming jdk.net's classes), so that no
 * {@code NoClassDefFoundError} reaches a connect.
 */
final class KeepAliveTuning {
    private KeepAliveTuning() {
    }

    /** Probes after half the bound idle, then every second, for the rest of it. Only when jdk.net is present. */
    static void apply(NetworkChannel c, Duration bound) throws IOException {
        if (!c.supportedOptions().contains(ExtendedSocketOptions.TCP_KEEPIDLE)) {
            return;
        }
        int seconds = (int) Math.max(2, bound.toSeconds());
        int idle = Math.max(1, seconds / 2);
        c.setOption(ExtendedSocketOptions.TCP_KEEPIDLE, idle);
        c.setOption(ExtendedSocketOptions.TCP_KEEPINTERVAL, 1);
        c.setOption(ExtendedSocketOptions.TCP_KEEPCOUNT, Math.max(1, seconds - idle));
    }
}
