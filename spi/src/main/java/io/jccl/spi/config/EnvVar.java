package io.jccl.spi.config;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares a configuration variable. Put it on a {@code public static final String} constant whose
 * name and value are the variable's name:
 *
 * <pre>{@code
 * @EnvVar(defaultValue = "WARN", description = "Log level: VERSION, WARN, INFO, ABORT or TRACE.")
 * public static final String NCCL_DEBUG = "NCCL_DEBUG";
 * }</pre>
 *
 * <p>NCCL's names are used wherever NCCL has the same setting; JCCL's own start with {@code JCCL_}.
 * The build checks that README.md's configuration table lists every annotated variable with the
 * same default, and nothing else.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface EnvVar {
    /** @return the default as the table shows it; empty when the variable is unset by default */
    String defaultValue();

    /** @return one sentence for the configuration table */
    String description();
}
