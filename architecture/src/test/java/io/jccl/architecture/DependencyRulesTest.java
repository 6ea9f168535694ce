package io.jccl.architecture;

import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.util.stream.Stream;

/** CONTRIBUTING.md's dependency rules hold for the production code of every module. */
class DependencyRulesTest {

    @TestFactory
    Stream<DynamicTest> everyRuleHolds() {
        return JcclArchitectureRules.all().stream()
                .map(rule -> DynamicTest.dynamicTest(rule.getDescription(), () -> rule.check(JcclClasses.production())));
    }

    /** Keeps a vacuous pass honest: the spi rule must see the spi. */
    @org.junit.jupiter.api.Test
    void spiRuleSeesTheSpi() {
        ArchRule rule = JcclArchitectureRules.spiDependsOnJavaBaseOnly().allowEmptyShould(false);
        rule.check(JcclClasses.production());
    }
}
