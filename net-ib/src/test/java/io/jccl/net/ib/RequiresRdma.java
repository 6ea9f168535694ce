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

    /** Disables each test method (not the class, so that every skip is counted) without a device. */
    final class Condition implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            if (context.getTestMethod().isEmpty()) {
                return ConditionEvaluationResult.enabled("checked per test");
            }
            Throwable cause = IbNetPlugin.unavailabilityCause();
            return cause == null ? ConditionEvaluationResult.enabled("RDMA device present")
                    : ConditionEvaluationResult.disabled("no RDMA device here: " + cause);
        }
    }
}
