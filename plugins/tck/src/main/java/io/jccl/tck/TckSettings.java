package io.jccl.tck;

import io.jccl.spi.config.Env;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * The kit's timeouts and sizes. Every duration accessor returns the value already multiplied by
 * {@link #timeoutScale()}.
 *
 * <p>Defaults come from the {@link TckConfig} variables; a vendor's kit class may override
 * {@link NetPluginTck#settings()} to change some, e.g.
 * {@code return TckSettings.fromEnvironment().toBuilder().timeoutScale(3).build();}.
 */
public final class TckSettings {
    /** The smallest largest-message size the size rule accepts: the spec's 256 MiB. */
    public static final long CONFORMANCE_MAX_SIZE = 256L << 20;

    private final double timeoutScale;
    private final Duration callBound;
    private final Duration connectTimeout;
    private final Duration completionTimeout;
    private final Duration peerDeathTimeout;
    private final Duration ruleTimeout;
    private final long maxMessageSize;
    private final int stressMessages;
    private final long seed;

    private TckSettings(Builder b) {
        if (!(b.timeoutScale > 0)) {
            throw new IllegalArgumentException("timeout scale must be > 0, got " + b.timeoutScale);
        }
        if (b.maxMessageSize < 1 || b.maxMessageSize > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("the largest message must be in [1, 2^31 - 1] bytes (test reports int "
                    + "sizes), got " + b.maxMessageSize);
        }
        this.timeoutScale = b.timeoutScale;
        this.callBound = positive(b.callBound, "call bound");
        this.connectTimeout = positive(b.connectTimeout, "connect timeout");
        this.completionTimeout = positive(b.completionTimeout, "completion timeout");
        this.peerDeathTimeout = positive(b.peerDeathTimeout, "peer-death timeout");
        this.ruleTimeout = positive(b.ruleTimeout, "rule timeout");
        this.maxMessageSize = b.maxMessageSize;
        this.stressMessages = Math.max(1, b.stressMessages);
        this.seed = b.seed;
    }

    private static Duration positive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
        return d;
    }

    /** @return settings from the {@link TckConfig} variables (system property, then environment) */
    public static TckSettings fromEnvironment() {
        return from(Env::get);
    }

    /**
     * @param lookup returns a variable's value, or {@code null} when unset; e.g. a JUnit configuration
     *               parameter with a fallback to {@link Env#get}
     * @return settings with every variable read through {@code lookup}
     * @throws IllegalArgumentException naming the variable whose value is malformed
     */
    public static TckSettings from(Function<String, String> lookup) {
        Builder b = new Builder();
        b.timeoutScale = parse(lookup, TckConfig.JCCL_TCK_TIMEOUT_SCALE, b.timeoutScale, Double::parseDouble);
        b.callBound = Duration.ofMillis(parse(lookup, TckConfig.JCCL_TCK_CALL_BOUND_MS, b.callBound.toMillis(),
                Long::parseLong));
        b.connectTimeout = Duration.ofMillis(parse(lookup, TckConfig.JCCL_TCK_CONNECT_TIMEOUT_MS,
                b.connectTimeout.toMillis(), Long::parseLong));
        b.completionTimeout = Duration.ofMillis(parse(lookup, TckConfig.JCCL_TCK_COMPLETION_TIMEOUT_MS,
                b.completionTimeout.toMillis(), Long::parseLong));
        b.peerDeathTimeout = Duration.ofMillis(parse(lookup, TckConfig.JCCL_TCK_PEER_DEATH_TIMEOUT_MS,
                b.peerDeathTimeout.toMillis(), Long::parseLong));
        b.ruleTimeout = Duration.ofSeconds(parse(lookup, TckConfig.JCCL_TCK_RULE_TIMEOUT_S,
                b.ruleTimeout.toSeconds(), Long::parseLong));
        b.maxMessageSize = parse(lookup, TckConfig.JCCL_TCK_MAX_SIZE, b.maxMessageSize, Env::parseBytes);
        b.stressMessages = parse(lookup, TckConfig.JCCL_TCK_STRESS_MESSAGES, b.stressMessages, Integer::parseInt);
        b.seed = parse(lookup, TckConfig.JCCL_TCK_SEED, b.seed, TckSettings::parseSeed);
        return b.build();
    }

    /**
     * A seed as the kit prints it ({@code 0x} and 16 hex digits, any of 2^64) or in decimal: a printed
     * seed from the upper half (0x8... to 0xf...) must replay too, which {@link Long#decode} refuses.
     */
    static long parseSeed(String v) {
        if (v.startsWith("0x") || v.startsWith("0X")) {
            return Long.parseUnsignedLong(v.substring(2), 16);
        }
        return Long.parseLong(v);
    }

    private static <T> T parse(Function<String, String> lookup, String name, T defaultValue,
                               Function<String, T> parser) {
        String v = lookup.apply(name);
        if (v == null || v.isBlank()) {
            return defaultValue;
        }
        try {
            return parser.apply(v.trim());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(name + "=" + v + " is malformed: " + e.getMessage(), e);
        }
    }

    /** @return a builder with the built-in defaults and a fresh random seed */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding these settings, to change a few */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.timeoutScale = timeoutScale;
        b.callBound = callBound;
        b.connectTimeout = connectTimeout;
        b.completionTimeout = completionTimeout;
        b.peerDeathTimeout = peerDeathTimeout;
        b.ruleTimeout = ruleTimeout;
        b.maxMessageSize = maxMessageSize;
        b.stressMessages = stressMessages;
        b.seed = seed;
        return b;
    }

    private Duration scaled(Duration d) {
        return Duration.ofNanos((long) Math.min(Long.MAX_VALUE / 2.0, d.toNanos() * timeoutScale));
    }

    /** @return the factor applied to every duration below */
    public double timeoutScale() {
        return timeoutScale;
    }

    /** @return how long one non-blocking call may take before the kit calls it blocking */
    public Duration callBound() {
        return scaled(callBound);
    }

    /** @return how long a connect/accept pair may take to complete by polling */
    public Duration connectTimeout() {
        return scaled(connectTimeout);
    }

    /** @return how long a transfer may go without any request completing */
    public Duration completionTimeout() {
        return scaled(completionTimeout);
    }

    /** @return how long pending requests may take to fail once their peer closed or died */
    public Duration peerDeathTimeout() {
        return scaled(peerDeathTimeout);
    }

    /** @return how long one rule may run before the kit fails it and reports where it is blocked */
    public Duration ruleTimeout() {
        return scaled(ruleTimeout);
    }

    /** @return the largest message of the size rule, in bytes */
    public long maxMessageSize() {
        return maxMessageSize;
    }

    /** @return messages in the random-size stress rule */
    public int stressMessages() {
        return stressMessages;
    }

    /** @return the seed of every random choice the kit makes */
    public long seed() {
        return seed;
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "timeout scale %s, call bound %d ms, connect %d ms, completion %d ms, "
                        + "peer death %d ms, rule %d s, max size %d, stress %d messages, seed 0x%x",
                timeoutScale, callBound().toMillis(), connectTimeout().toMillis(), completionTimeout().toMillis(),
                peerDeathTimeout().toMillis(), ruleTimeout().toSeconds(), maxMessageSize, stressMessages, seed);
    }

    /** Builds {@link TckSettings}; durations are given unscaled. */
    public static final class Builder {
        private double timeoutScale = 1;
        private Duration callBound = Duration.ofMillis(1000);
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration completionTimeout = Duration.ofSeconds(20);
        private Duration peerDeathTimeout = Duration.ofSeconds(10);
        private Duration ruleTimeout = Duration.ofSeconds(180);
        private long maxMessageSize = CONFORMANCE_MAX_SIZE;
        private int stressMessages = 2000;
        private long seed = ThreadLocalRandom.current().nextLong();

        private Builder() {
        }

        public Builder timeoutScale(double v) { timeoutScale = v; return this; }
        public Builder callBound(Duration v) { callBound = v; return this; }
        public Builder connectTimeout(Duration v) { connectTimeout = v; return this; }
        public Builder completionTimeout(Duration v) { completionTimeout = v; return this; }
        public Builder peerDeathTimeout(Duration v) { peerDeathTimeout = v; return this; }
        public Builder ruleTimeout(Duration v) { ruleTimeout = v; return this; }
        public Builder maxMessageSize(long v) { maxMessageSize = v; return this; }
        public Builder stressMessages(int v) { stressMessages = v; return this; }
        public Builder seed(long v) { seed = v; return this; }

        /** @return the settings */
        public TckSettings build() {
            return new TckSettings(this);
        }
    }
}
