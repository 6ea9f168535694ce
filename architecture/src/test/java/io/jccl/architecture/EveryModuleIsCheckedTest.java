package io.jccl.architecture;

import com.tngtech.archunit.core.domain.JavaClass;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rules only see modules that are dependencies of this one. A module added to the build and not
 * here would escape them; this test catches that.
 */
class EveryModuleIsCheckedTest {

    @Test
    void everyMainSourcePackageIsImported() {
        Set<String> imported = new TreeSet<>();
        for (JavaClass c : JcclClasses.production()) {
            imported.add(c.getPackageName());
        }
        Set<String> missing = new TreeSet<>(RepositoryLayout.mainPackages());
        missing.removeIf(p -> !p.startsWith("io.jccl"));
        missing.removeAll(imported);
        assertTrue(missing.isEmpty(), "packages with main sources that the architecture rules do not see: " + missing
                + "\nIf this fails, add the module that holds them as a test dependency of architecture/pom.xml.");
    }
}
