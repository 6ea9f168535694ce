package io.jccl.tck;

import org.junit.jupiter.api.DisplayNameGenerator;

import java.lang.reflect.Method;
import java.util.List;

/** Shows a rule as {@code conn.3 [required] one listen comm serves many connections} in IDEs and reports. */
final class RuleDisplayNames extends DisplayNameGenerator.Standard {
    @Override
    public String generateDisplayNameForMethod(List<Class<?>> enclosingInstanceTypes, Class<?> testClass, Method method) {
        return ConformanceRule.of(method)
                .map(r -> r.id() + " [" + r.level().label() + "] " + r.title())
                .orElseGet(() -> super.generateDisplayNameForMethod(enclosingInstanceTypes, testClass, method));
    }
}
