package io.jccl.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

/** The production classes of every JCCL module on this module's test class path, imported once. */
final class JcclClasses {
    private static JavaClasses classes;

    private JcclClasses() {
    }

    static synchronized JavaClasses production() {
        if (classes == null) {
            classes = new ClassFileImporter()
                    .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                    .withImportOption(location -> !location.contains("/test-classes/") && !location.contains("-tests.jar"))
                    .importPackages("io.jccl");
        }
        return classes;
    }
}
