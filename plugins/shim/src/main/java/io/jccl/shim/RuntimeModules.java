package io.jccl.shim;

import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.zip.ZipFile;

/**
 * The Java runtime modules that the shim and the transports it runs need, and whether the runtime
 * that NCCL's process got has them. A jlink'ed runtime may lack a module; without this check that
 * would surface as a {@code NoClassDefFoundError} in the middle of a connect. Each jar's
 * {@code module-info} states what it needs (the shim: {@code java.base}; JcclSocket: {@code java.base},
 * {@code jdk.net} optional; JcclIB: {@code java.base}, {@code jdk.net}); the shim reads it whether the
 * jar runs on the class path (as the shim runs them) or as a named module.
 */
final class RuntimeModules {
    private RuntimeModules() {
    }

    /**
     * @param classes classes from the jars to check (a shim class, a transport class)
     * @return null if the running Java runtime has every platform module those jars require, else
     *         one line naming the missing modules, who needs them and how to fix it
     */
    static String problem(String who, Class<?>... classes) {
        Set<String> required = new TreeSet<>();
        for (Class<?> c : classes) {
            required.addAll(required(c));
        }
        List<String> missing = new ArrayList<>();
        for (String m : required) {
            if (ModuleLayer.boot().findModule(m).isEmpty()) {
                missing.add(m);
            }
        }
        if (missing.isEmpty()) {
            return null;
        }
        return "the Java runtime " + System.getProperty("java.home") + " lacks module" + (missing.size() == 1 ? " " : "s ")
                + String.join(", ", missing) + ", which " + who + " needs: point JCCL_JAVA_HOME at a full JDK 22+, or "
                + "build the runtime with them (jlink --add-modules " + String.join(",", required) + " ...)";
    }

    /**
     * @return the platform modules ({@code java.*}, {@code jdk.*}) that the module of {@code c}
     *         requires at run time (not {@code requires static}): from its named module, else from
     *         the {@code module-info.class} of the jar or directory it was loaded from; none if it has
     *         no module-info
     */
    static Set<String> required(Class<?> c) {
        ModuleDescriptor d = c.getModule().isNamed() ? c.getModule().getDescriptor() : descriptorOfCodeSource(c);
        Set<String> names = new TreeSet<>();
        if (d == null) {
            return names;
        }
        for (ModuleDescriptor.Requires r : d.requires()) {
            if (!r.modifiers().contains(ModuleDescriptor.Requires.Modifier.STATIC)
                    && (r.name().startsWith("java.") || r.name().startsWith("jdk."))) {
                names.add(r.name());
            }
        }
        return names;
    }

    private static ModuleDescriptor descriptorOfCodeSource(Class<?> c) {
        CodeSource source = c.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            return null;
        }
        try {
            Path where = Path.of(source.getLocation().toURI());
            if (Files.isDirectory(where)) {
                Path info = where.resolve("module-info.class");
                if (!Files.isRegularFile(info)) {
                    return null;
                }
                try (InputStream in = Files.newInputStream(info)) {
                    return ModuleDescriptor.read(in);
                }
            }
            try (ZipFile jar = new ZipFile(where.toFile())) {
                var entry = jar.getEntry("module-info.class");
                if (entry == null) {
                    return null;
                }
                try (InputStream in = jar.getInputStream(entry)) {
                    return ModuleDescriptor.read(in);
                }
            }
        } catch (IOException | URISyntaxException | RuntimeException e) {
            // Unreadable: nothing known to check; a missing module then shows when it is used.
            return null;
        }
    }
}
