package io.jccl.spi.config;

/**
 * The variables that the SPI itself reads: transport selection and logging.
 */
public final class SpiConfig {
    private SpiConfig() {
    }

    @EnvVar(defaultValue = "",
            description = "Use the transport of this name (case-insensitive), as NCCL does; unset: the first "
                    + "transport that initialises and reports at least one device.")
    public static final String NCCL_NET = "NCCL_NET";

    @EnvVar(defaultValue = "WARN",
            description = "Log level: VERSION, WARN, INFO, ABORT or TRACE. (NCCL's own default prints nothing; "
                    + "JCCL shows warnings.)")
    public static final String NCCL_DEBUG = "NCCL_DEBUG";

    @EnvVar(defaultValue = "INIT,BOOTSTRAP,ENV",
            description = "Subsystems logged at INFO and TRACE: a comma list (INIT, NET, PROXY, COLL, ALL, ...), "
                    + "^ to exclude.")
    public static final String NCCL_DEBUG_SUBSYS = "NCCL_DEBUG_SUBSYS";

    @EnvVar(defaultValue = "",
            description = "Write the log to this file instead of stderr; %h is replaced by the host name, %p by "
                    + "the process id.")
    public static final String NCCL_DEBUG_FILE = "NCCL_DEBUG_FILE";
}
