package io.jccl.core.kernel;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.CodeSource;

/** Finds a native library that core's build puts under {@code META-INF/native/linux-ARCH/}. */
final class BundledLibrary {
    private BundledLibrary() {
    }

    /**
     * The library in the build's class directory where this class runs from one (tests, the build
     * tree), else its copy from this module's jar in a temporary file (a library cannot be loaded
     * from inside a jar).
     *
     * @param library the file name, e.g. {@code libjccl-halffloats.so}
     */
    static Path locate(String library) throws IOException {
        String resource = "META-INF/native/linux-" + System.getProperty("os.arch") + "/" + library;
        CodeSource source = BundledLibrary.class.getProtectionDomain().getCodeSource();
        if (source != null && source.getLocation() != null) {
            try {
                Path where = Path.of(source.getLocation().toURI());
                if (Files.isDirectory(where) && Files.isRegularFile(where.resolve(resource))) {
                    return where.resolve(resource);
                }
            } catch (URISyntaxException | IllegalArgumentException e) {
                // Not a file location; the copy below.
            }
        }
        // not a package name (it has '-'), so the module's encapsulation leaves it readable
        try (InputStream in = BundledLibrary.class.getResourceAsStream("/" + resource)) {
            if (in == null) {
                throw new IOException("no " + resource + " for this platform (" + System.getProperty("os.name") + " "
                        + System.getProperty("os.arch") + ")");
            }
            String stem = library.replaceFirst("^lib", "").replaceFirst("\\.so$", "");
            Path copy = Files.createTempFile(stem + "-", ".so");
            copy.toFile().deleteOnExit();
            Files.copy(in, copy, StandardCopyOption.REPLACE_EXISTING);
            return copy;
        }
    }
}
