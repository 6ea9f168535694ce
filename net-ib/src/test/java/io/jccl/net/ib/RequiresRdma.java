package io.jccl.net.ib;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks tests that need a usable verbs device. Where there is none, each test is reported skipped
 * with {@link IbNetPlugin#unavailabilityCause()}; nothing pretends to be a device.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RequiresRdma.Condition.class)
@interface RequiresRdma {

    /**
     * @return {@code false} to disable the class as a whole (for a class whose {@code @BeforeAll}
     *         needs the device, such as a conformance-kit class); by default each test is disabled,
     *         so that every skip is counted
     */
    boolean perTest() default true;

    /** Disables each test method, or the whole class, where there is no device. */
    final class Condition implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            boolean perTest = context.getRequiredTestClass().getAnnotation(RequiresRdma.class).perTest();
            if (context.getTestMethod().isEmpty() == perTest) {
                return ConditionEvaluationResult.enabled("checked per " + (perTest ? "test" : "class"));
            }
            Throwable cause = IbNetPlugin.unavailabilityCause();
            return cause == null ? ConditionEvaluationResult.enabled("RDMA device present")
                    : ConditionEvaluationResult.disabled("no RDMA device here: " + cause);
        }
    }
}
