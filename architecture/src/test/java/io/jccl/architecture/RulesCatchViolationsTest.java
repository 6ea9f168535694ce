package io.jccl.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import io.jccl.core.archfixture.Engine;
import io.jccl.nativenet.archfixture.HostUsingTransport;
import io.jccl.net.alpha.archfixture.AlphaTransport;
import io.jccl.net.alpha.archfixture.AlphaUsingCore;
import io.jccl.net.beta.archfixture.BetaUsingAlpha;
import io.jccl.spi.archfixture.CleanSpiType;
import io.jccl.spi.archfixture.SpiUsingJavaLogging;
import io.jccl.tck.archfixture.RuleUsingCore;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each rule fails on a class that breaks it (fixtures in this module's test sources, in the packages
 * the rules govern) and passes on one that obeys it. This is the proof that adding a forbidden
 * import to real code fails the build.
 */
class RulesCatchViolationsTest {

    private static JavaClasses of(Class<?>... types) {
        return new ClassFileImporter().importClasses(types);
    }

    private static void assertCaught(ArchRule rule, JavaClasses classes, String offender, String target) {
        AssertionError e = assertThrows(AssertionError.class, () -> rule.check(classes),
                rule.getDescription() + " should fail");
        assertTrue(e.getMessage().contains(offender) && e.getMessage().contains(target),
                "violation should name " + offender + " -> " + target + ":\n" + e.getMessage());
    }

    @Test
    void spiImportingAModuleOtherThanJavaBaseFails() {
        assertCaught(JcclArchitectureRules.spiDependsOnJavaBaseOnly(), of(SpiUsingJavaLogging.class),
                SpiUsingJavaLogging.class.getName(), "java.util.logging.Logger");
        JcclArchitectureRules.spiDependsOnJavaBaseOnly().check(of(CleanSpiType.class));
    }

    @Test
    void transportImportingCoreFails() {
        assertCaught(JcclArchitectureRules.transportsDependOnSpiOnly(), of(AlphaUsingCore.class, Engine.class),
                AlphaUsingCore.class.getName(), Engine.class.getName());
        JcclArchitectureRules.transportsDependOnSpiOnly().check(of(AlphaTransport.class));
    }

    @Test
    void transportImportingAnotherTransportFails() {
        assertCaught(JcclArchitectureRules.transportsAreIndependent(), of(BetaUsingAlpha.class, AlphaTransport.class),
                BetaUsingAlpha.class.getName(), AlphaTransport.class.getName());
    }

    @Test
    void coreImportingATransportFails() {
        assertCaught(JcclArchitectureRules.coreDependsOnSpiOnly(), of(Engine.class, AlphaTransport.class),
                Engine.class.getName(), AlphaTransport.class.getName());
    }

    @Test
    void tckImportingCoreFails() {
        assertCaught(JcclArchitectureRules.tckDependsOnSpiOnly(), of(RuleUsingCore.class, Engine.class),
                RuleUsingCore.class.getName(), Engine.class.getName());
    }

    @Test
    void nativeHostImportingATransportFails() {
        assertCaught(JcclArchitectureRules.nativeBridgesDependOnSpiOnly(), of(HostUsingTransport.class),
                HostUsingTransport.class.getName(), AlphaTransport.class.getName());
    }
}
