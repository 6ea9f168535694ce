package io.jccl.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.lang.ArchRule;

import java.util.List;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The dependency rules of CONTRIBUTING.md as ArchUnit rules, one per rule of the guide. Package roots stand
 * for modules: {@code io.jccl.spi} (spi), {@code io.jccl.net.<name>} (one transport each),
 * {@code io.jccl.core} (engine), {@code io.jccl.tck} (conformance kit), {@code io.jccl.nativenet}
 * (native-plugin host), {@code io.jccl.shim} (Java side of the native shim); {@code io.jccl.cli}
 * assembles everything and may depend on all of it.
 *
 * <p>Rules about modules that do not exist yet pass vacuously, so they bind the module from its
 * first class.
 */
final class JcclArchitectureRules {
    private JcclArchitectureRules() {
    }

    /** Classes that belong to module {@code java.base}; everything the spi may use. */
    static final DescribedPredicate<JavaClass> IN_JAVA_BASE = new DescribedPredicate<>("are in module java.base") {
        @Override
        public boolean test(JavaClass type) {
            JavaClass base = type.isArray() ? type.getBaseComponentType() : type;
            if (base.isPrimitive()) {
                return true;
            }
            try {
                Class<?> c = Class.forName(base.getName(), false, ClassLoader.getPlatformClassLoader());
                return "java.base".equals(c.getModule().getName());
            } catch (ClassNotFoundException | LinkageError e) {
                return false;
            }
        }
    };

    private static final DescribedPredicate<JavaClass> OUTSIDE_JCCL =
            DescribedPredicate.not(resideInAPackage("io.jccl.."));

    /** Rule 1: spi depends on java.base only. */
    static ArchRule spiDependsOnJavaBaseOnly() {
        return classes().that().resideInAPackage("io.jccl.spi..")
                .should().onlyDependOnClassesThat(resideInAPackage("io.jccl.spi..").or(IN_JAVA_BASE))
                .because("spi is what every transport, the conformance kit and the native shim build on "
                        + "(CONTRIBUTING.md: spi depends on java.base only)")
                .allowEmptyShould(true);
    }

    /**
     * Rule 2: a transport depends on spi and its own libraries (the CUDA binding among them, for device
     * memory), never on core or another JCCL module.
     */
    static ArchRule transportsDependOnSpiOnly() {
        return classes().that().resideInAPackage("io.jccl.net..")
                .should().onlyDependOnClassesThat(OUTSIDE_JCCL.or(
                        resideInAnyPackage("io.jccl.spi..", "io.jccl.cuda..", "io.jccl.net..")))
                .because("a transport depends on spi and its own libraries, never on core (CONTRIBUTING.md)")
                .allowEmptyShould(true);
    }

    /** Rule 3: transports never depend on each other. */
    static ArchRule transportsAreIndependent() {
        return slices().matching("io.jccl.net.(*)..").namingSlices("transport $1")
                .should().notDependOnEachOther()
                .because("a transport never depends on another transport (CONTRIBUTING.md)")
                .allowEmptyShould(true);
    }

    /** Rule 4: core never depends on a transport implementation, nor on any JCCL module but spi and cuda. */
    static ArchRule coreDependsOnSpiOnly() {
        return classes().that().resideInAPackage("io.jccl.core..")
                .should().onlyDependOnClassesThat(OUTSIDE_JCCL.or(
                        resideInAnyPackage("io.jccl.spi..", "io.jccl.cuda..", "io.jccl.core..")))
                .because("core runs on any transport through the SPI and never names one (CONTRIBUTING.md)")
                .allowEmptyShould(true);
    }

    /** Rule 5: the conformance kit depends on spi only. */
    static ArchRule tckDependsOnSpiOnly() {
        return classes().that().resideInAPackage("io.jccl.tck..")
                .should().onlyDependOnClassesThat(OUTSIDE_JCCL.or(resideInAnyPackage("io.jccl.spi..", "io.jccl.tck..")))
                .because("the conformance kit judges any transport through the SPI alone (CONTRIBUTING.md)")
                .allowEmptyShould(true);
    }

    /** Rule 6: the native bridges (host and shim) are transports of a kind: spi only. */
    static ArchRule nativeBridgesDependOnSpiOnly() {
        return classes().that().resideInAnyPackage("io.jccl.nativenet..", "io.jccl.shim..")
                .should().onlyDependOnClassesThat(OUTSIDE_JCCL.or(
                        resideInAnyPackage("io.jccl.spi..", "io.jccl.nativenet..", "io.jccl.shim..")))
                .because("the bridges adapt the SPI to the C ABI and must work with any transport")
                .allowEmptyShould(true);
    }

    /** Rule 7: the CUDA binding depends on java.base only, so that core and transports can both use it. */
    static ArchRule cudaDependsOnJavaBaseOnly() {
        return classes().that().resideInAPackage("io.jccl.cuda..")
                .should().onlyDependOnClassesThat(resideInAPackage("io.jccl.cuda..").or(IN_JAVA_BASE))
                .because("the CUDA binding is a library under core and the transports, not above them")
                .allowEmptyShould(true);
    }

    /** @return every rule, for the check over the real code */
    static List<ArchRule> all() {
        return List.of(spiDependsOnJavaBaseOnly(), cudaDependsOnJavaBaseOnly(), transportsDependOnSpiOnly(),
                transportsAreIndependent(), coreDependsOnSpiOnly(), tckDependsOnSpiOnly(), nativeBridgesDependOnSpiOnly());
    }
}
