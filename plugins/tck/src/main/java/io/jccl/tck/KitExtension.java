package io.jccl.tck;

import io.jccl.tck.internal.Deadline;
import io.jccl.tck.internal.RecordingLogger;
import io.jccl.tck.internal.Threads;
import io.jccl.spi.NetException;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestInstancePostProcessor;
import org.opentest4j.TestAbortedException;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * The JUnit glue of the kit classes:
 * <ul>
 *   <li>hands JUnit configuration parameters to the kit instance (how {@code jccl tck} passes the
 *       transport's name and the timeouts);</li>
 *   <li>runs every rule, and the transport's set-up, under a watchdog: a rule still running after
 *       the rule timeout fails with the stack of its blocked thread, and the kit moves on;</li>
 *   <li>turns every failure into a {@link RuleViolation} carrying the rule's id, its hint and
 *       what the transport logged meanwhile.</li>
 * </ul>
 */
final class KitExtension implements TestInstancePostProcessor, InvocationInterceptor, TestExecutionExceptionHandler {
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(KitExtension.class);

    @Override
    public void postProcessTestInstance(Object testInstance, ExtensionContext context) {
        Function<String, String> parameters = key -> context.getConfigurationParameter(key).orElse(null);
        if (testInstance instanceof NetPluginTck kit) {
            kit.useParameters(parameters);
        } else if (testInstance instanceof CollNetPluginTck kit) {
            kit.useParameters(parameters);
        }
    }

    private static Duration ruleTimeout(ExtensionContext context) {
        Object kit = context.getTestInstance().orElse(null);
        TckSettings s = kit instanceof NetPluginTck n ? n.kitSettings()
                : kit instanceof CollNetPluginTck c ? c.kitSettings() : null;
        return s == null ? TckSettings.fromEnvironment().ruleTimeout() : s.ruleTimeout();
    }

    private static RecordingLogger logger(ExtensionContext context) {
        Object kit = context.getTestInstance().orElse(null);
        return kit instanceof NetPluginTck n ? n.kitLogger() : kit instanceof CollNetPluginTck c ? c.kitLogger() : null;
    }

    @Override
    public void interceptBeforeAllMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> invocationContext,
                                         ExtensionContext context) throws Throwable {
        watched(invocation, "set-up " + invocationContext.getExecutable().getName(), ruleTimeout(context));
    }

    @Override
    public void interceptAfterAllMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> invocationContext,
                                        ExtensionContext context) throws Throwable {
        watched(invocation, "tear-down " + invocationContext.getExecutable().getName(), ruleTimeout(context));
    }

    @Override
    public void interceptTestMethod(Invocation<Void> invocation, ReflectiveInvocationContext<Method> invocationContext,
                                    ExtensionContext context) throws Throwable {
        RecordingLogger log = logger(context);
        if (log != null) {
            context.getStore(NAMESPACE).put("logMark", log.mark());
        }
        Method m = invocationContext.getExecutable();
        String name = ConformanceRule.of(m).map(ConformanceRule::id).orElse(m.getName());
        watched(invocation, name, ruleTimeout(context));
    }

    /** Runs the invocation on its own thread and gives up on it after {@code limit}. */
    private static void watched(Invocation<Void> invocation, String what, Duration limit) throws Throwable {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                invocation.proceed();
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "jccl-tck-" + what.replace(' ', '-') + "-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        t.start();
        t.join(Math.max(1, limit.toMillis()));
        if (t.isAlive()) {
            String stack = Threads.stackOf(t);
            t.interrupt();
            throw new AssertionError(what + " did not finish within " + Deadline.format(limit) + " (rule timeout, "
                    + TckConfig.JCCL_TCK_RULE_TIMEOUT_S + "); the kit gave up on it. Its thread is at:\n" + stack);
        }
        if (failure.get() != null) {
            throw failure.get();
        }
    }

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable throwable) throws Throwable {
        Optional<ConformanceRule> rule = context.getTestMethod().flatMap(ConformanceRule::of);
        if (throwable instanceof TestAbortedException || throwable instanceof RuleViolation || rule.isEmpty()) {
            throw throwable;
        }
        String detail = throwable instanceof NetException e
                ? "the transport threw " + e.result().ncclName() + ": " + e.getMessage()
                : throwable instanceof AssertionError ? String.valueOf(throwable.getMessage())
                : throwable.toString();
        throw new RuleViolation(rule.get(), detail, transportLog(context), throwable);
    }

    private static String transportLog(ExtensionContext context) {
        RecordingLogger log = logger(context);
        Long mark = context.getStore(NAMESPACE).get("logMark", Long.class);
        if (log == null || mark == null) {
            return "";
        }
        List<String> lines = log.linesSince(mark);
        List<String> last = lines.subList(Math.max(0, lines.size() - 20), lines.size());
        StringBuilder sb = new StringBuilder();
        for (String l : last) {
            sb.append("  ").append(l).append('\n');
        }
        return sb.toString();
    }
}
