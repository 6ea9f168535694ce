package io.jccl.tck;

import io.jccl.spi.config.EnvVar;

/**
 * The variables the conformance kit reads (through {@link TckSettings#fromEnvironment()}). A JUnit
 * configuration parameter of the same name, as {@code jccl tck} passes them, wins over both the
 * system property and the environment.
 */
public final class TckConfig {
    private TckConfig() {
    }

    @EnvVar(defaultValue = "1",
            description = "Conformance kit: multiplies every kit timeout and bound (e.g. 4 for a debug build, an "
                    + "emulator or a loaded machine).")
    public static final String JCCL_TCK_TIMEOUT_SCALE = "JCCL_TCK_TIMEOUT_SCALE";

    @EnvVar(defaultValue = "1000",
            description = "Conformance kit: milliseconds within which one non-blocking call (listen, connect, "
                    + "accept, isend, irecv, test) must return.")
    public static final String JCCL_TCK_CALL_BOUND_MS = "JCCL_TCK_CALL_BOUND_MS";

    @EnvVar(defaultValue = "10000",
            description = "Conformance kit: milliseconds within which a connect/accept pair completes by polling.")
    public static final String JCCL_TCK_CONNECT_TIMEOUT_MS = "JCCL_TCK_CONNECT_TIMEOUT_MS";

    @EnvVar(defaultValue = "20000",
            description = "Conformance kit: milliseconds a transfer may go without any request completing before "
                    + "the kit calls it stuck.")
    public static final String JCCL_TCK_COMPLETION_TIMEOUT_MS = "JCCL_TCK_COMPLETION_TIMEOUT_MS";

    @EnvVar(defaultValue = "10000",
            description = "Conformance kit: milliseconds within which every pending request fails once its peer "
                    + "closed or was killed.")
    public static final String JCCL_TCK_PEER_DEATH_TIMEOUT_MS = "JCCL_TCK_PEER_DEATH_TIMEOUT_MS";

    @EnvVar(defaultValue = "180",
            description = "Conformance kit: seconds after which a rule that has not finished is failed, with the "
                    + "stack of its blocked thread.")
    public static final String JCCL_TCK_RULE_TIMEOUT_S = "JCCL_TCK_RULE_TIMEOUT_S";

    @EnvVar(defaultValue = "256M",
            description = "Conformance kit: largest message of the size rule (powers of two up to it); a "
                    + "conformance claim needs at least 256M.")
    public static final String JCCL_TCK_MAX_SIZE = "JCCL_TCK_MAX_SIZE";

    @EnvVar(defaultValue = "2000",
            description = "Conformance kit: messages of random size in the stress rule.")
    public static final String JCCL_TCK_STRESS_MESSAGES = "JCCL_TCK_STRESS_MESSAGES";

    @EnvVar(defaultValue = "",
            description = "Conformance kit: seed of the random sizes and data; unset: a new seed per run, printed "
                    + "with every failure so that it can be replayed.")
    public static final String JCCL_TCK_SEED = "JCCL_TCK_SEED";
}
