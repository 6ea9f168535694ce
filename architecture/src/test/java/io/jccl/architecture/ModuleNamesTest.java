package io.jccl.architecture;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarFile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * JPMS names are part of the published API: users write them in {@code requires}. Each published
 * module's name, read from what the build produced (its module-info, or the jar's
 * {@code Automatic-Module-Name}), must stay the one below. If this fails after a rename, the
 * rename breaks every user's module-info: undo it, or make it a major version.
 */
class ModuleNamesTest {
    /** Module directory to its JPMS name. */
    static final Map<String, String> NAMES = new TreeMap<>(Map.of(
            "spi", "io.jccl.spi",
            "cuda", "io.jccl.cuda",
            "core", "io.jccl.core",
            "net-socket", "io.jccl.net.socket",
            "net-ib", "io.jccl.net.ib",
            "plugins/tck", "io.jccl.tck",
            "plugins/native", "io.jccl.nativenet",
            "plugins/shim", "io.jccl.shim",
            "cli", "io.jccl.cli"));

    @Test
    void everyPublishedModuleKeepsItsName() throws IOException {
        Map<String, String> found = new TreeMap<>();
        for (String dir : NAMES.keySet()) {
            Path classes = RepositoryLayout.root().resolve(dir).resolve("target/classes");
            assertTrue(Files.isDirectory(classes), classes + " is not built");
            if (Files.exists(classes.resolve("module-info.class"))) {
                found.put(dir, ModuleFinder.of(classes).findAll().stream().map(ModuleReference::descriptor)
                        .map(d -> d.name()).findFirst().orElse("(none)"));
            } else {
                found.put(dir, automaticName(RepositoryLayout.root().resolve(dir).resolve("target")));
            }
        }
        assertEquals(NAMES, found);
    }

    /** @return the {@code Automatic-Module-Name} of the module's main jar */
    private static String automaticName(Path target) throws IOException {
        try (var jars = Files.list(target)) {
            Path jar = jars.filter(p -> p.toString().endsWith(".jar")).filter(p -> !p.toString().matches(
                    ".*-(sources|javadoc|tests)\\.jar"))
                    .findFirst().orElseThrow(() -> new AssertionError("no jar in " + target));
            try (JarFile f = new JarFile(jar.toFile())) {
                String name = f.getManifest() == null ? null
                        : f.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
                return name == null ? "(no module-info, no Automatic-Module-Name in " + jar.getFileName() + ")" : name;
            }
        }
    }
}
