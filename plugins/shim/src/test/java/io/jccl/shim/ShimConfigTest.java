package io.jccl.shim;

import io.jccl.spi.config.EnvVar;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shim's variables are read by its C half, documented by {@link ShimConfig} (and so in README's
 * table): the two must name the same variables. If this fails, a variable was renamed on one side only.
 */
class ShimConfigTest {

    private static String cSources() throws IOException {
        StringBuilder all = new StringBuilder();
        try (Stream<Path> files = Files.list(ShimLibrary.cSources())) {
            for (Path f : files.filter(p -> p.toString().endsWith(".c")).sorted().toList()) {
                all.append(Files.readString(f));
            }
        }
        return all.toString();
    }

    @Test
    void theCHalfReadsEveryDeclaredVariable() throws Exception {
        String c = cSources();
        List<String> declared = new ArrayList<>();
        for (Field f : ShimConfig.class.getFields()) {
            if (f.isAnnotationPresent(EnvVar.class)) {
                declared.add((String) f.get(null));
            }
        }
        assertFalse(declared.isEmpty());
        // JCCL_JAVA_HOME is declared by the launcher's config (shared); NCCL_NET by the spi's.
        declared.add("JCCL_JAVA_HOME");
        declared.add("NCCL_NET");
        for (String name : declared) {
            assertTrue(c.contains("getenv(\"" + name + "\")"), "the C half never reads " + name);
        }
    }

    @Test
    void theCHalfReadsNoUndeclaredJcclVariable() throws Exception {
        var m = java.util.regex.Pattern.compile("getenv\\(\"(JCCL_[A-Z0-9_]+)\"\\)").matcher(cSources());
        while (m.find()) {
            String name = m.group(1);
            boolean declared = name.equals("JCCL_JAVA_HOME");
            for (Field f : ShimConfig.class.getFields()) {
                declared |= f.isAnnotationPresent(EnvVar.class) && f.getName().equals(name);
            }
            assertTrue(declared, name + " is read by the C half but not declared in ShimConfig");
        }
    }
}
