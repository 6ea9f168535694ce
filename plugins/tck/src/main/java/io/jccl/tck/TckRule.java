package io.jccl.tck;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a test method of the kit as a numbered conformance rule.
 *
 * <p>The annotation is the rule's data: {@code jccl tck}, the reports and the failure messages
 * print its id, level and hint, and the kit's own tests check that every rule method carries one
 * whose id and level agree with the method name ({@code required_conn_3_...} is rule
 * {@code conn.3}, {@link RuleLevel#REQUIRED}). It is {@link Documented}, so the hint appears in
 * the Javadoc of every rule.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface TckRule {
    /** @return the rule's id: area and number, e.g. {@code conn.3} */
    String id();

    /** @return whether the rule is required or optional */
    RuleLevel level();

    /** @return where to look when the rule fails: "If this fails, check ..." */
    String hint();

    /**
     * @return empty if NCCL's plugin documentation ({@code plugins/net/README.md}, {@code net.h})
     *         requires what the rule checks; otherwise, in a sentence, what the rule asks beyond it
     *         and why JCCL does. A failure of such a rule still fails the rule (and, if required,
     *         conformance), but is not a deviation from NCCL's documented contract, and the reports
     *         say so.
     */
    String beyondNccl() default "";
}
