package io.jccl.architecture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/** The checkout this build runs in: its root and the Java packages of every module's main sources. */
final class RepositoryLayout {
    private RepositoryLayout() {
    }

    /** @return the repository root (the parent of this module) */
    static Path root() {
        Path module = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().normalize();
        return module.getParent();
    }

    /** @return every package that has a class under some {@code src/main/java}, outside build outputs */
    static Set<String> mainPackages() {
        Set<String> packages = new TreeSet<>();
        try (Stream<Path> files = Files.walk(root())) {
            files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !p.toString().contains("/target/") && !p.toString().contains("/.git/"))
                    .forEach(p -> {
                        String s = p.toString();
                        int i = s.indexOf("/src/main/java/");
                        String name = p.getFileName().toString();
                        if (i >= 0 && !name.equals("module-info.java") && !name.equals("package-info.java")) {
                            String rel = s.substring(i + "/src/main/java/".length());
                            packages.add(rel.substring(0, rel.lastIndexOf('/')).replace('/', '.'));
                        }
                    });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return packages;
    }
}
