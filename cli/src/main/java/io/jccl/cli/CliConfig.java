package io.jccl.cli;

import io.jccl.spi.config.EnvVar;

/**
 * Variables read by the launcher script {@code bin/jccl} (declared here so that they appear in the
 * one configuration table with everything else).
 */
public final class CliConfig {
    private CliConfig() {
    }

    @EnvVar(defaultValue = "",
            description = "JDK (22 or newer) that bin/jccl runs, and whose libjvm the native shim starts; unset: "
                    + "JAVA_HOME if it is 22+, else the newest JDK 22+ under JCCL_JDK_SEARCH_DIRS (bin/jccl), or "
                    + "the runtime/ beside the library (jccl package --jlink), else libjvm.so on the library path (shim).")
    public static final String JCCL_JAVA_HOME = "JCCL_JAVA_HOME";

    @EnvVar(defaultValue = "/usr/lib/jvm:~/.sdkman/candidates/java:~/.jdks:/opt/java",
            description = "Colon-separated directories where bin/jccl looks for installed JDKs.")
    public static final String JCCL_JDK_SEARCH_DIRS = "JCCL_JDK_SEARCH_DIRS";

    @EnvVar(defaultValue = "",
            description = "Extra class path for bin/jccl, e.g. a vendor's transport jars.")
    public static final String JCCL_CLASSPATH = "JCCL_CLASSPATH";

    @EnvVar(defaultValue = "",
            description = "Extra JVM options for bin/jccl, e.g. -Xmx8g.")
    public static final String JCCL_JAVA_OPTS = "JCCL_JAVA_OPTS";

    @EnvVar(defaultValue = "",
            description = "Set by jccl run --elastic for its ranks: a directory private to the job where survivors "
                    + "and replacement ranks meet (the example ElasticTraining writes the grow id there).")
    public static final String JCCL_ELASTIC_DIR = "JCCL_ELASTIC_DIR";

    @EnvVar(defaultValue = "",
            description = "Set to 1 by jccl run --respawn for a rank started in place of one that died: it joins "
                    + "the survivors' communicator by grow (its RANK is that of the rank it replaces, for its logs) "
                    + "instead of starting a new one.")
    public static final String JCCL_ELASTIC_JOIN = "JCCL_ELASTIC_JOIN";
}
