package io.jccl.tck;

import org.junit.jupiter.api.MethodDescriptor;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.MethodOrdererContext;

import java.util.Comparator;

/** Runs rules in {@link ConformanceRule#ORDER}: set-up areas first, faults last; other methods after. */
final class RuleOrder implements MethodOrderer {
    @Override
    public void orderMethods(MethodOrdererContext context) {
        context.getMethodDescriptors().sort(Comparator.comparing(
                (MethodDescriptor d) -> ConformanceRule.of(d.getMethod()).orElse(null),
                Comparator.nullsLast(ConformanceRule.ORDER)));
    }
}
