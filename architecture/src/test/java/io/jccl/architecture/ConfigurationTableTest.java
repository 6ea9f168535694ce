package io.jccl.architecture;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaField;
import io.jccl.spi.config.EnvVar;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * README.md's configuration table lists exactly the variables declared with {@link EnvVar} in the
 * code, with the same defaults: the one documented table of CONTRIBUTING.md.
 */
class ConfigurationTableTest {
    private static final String START = "<!-- config-table:start -->";
    private static final String END = "<!-- config-table:end -->";
    /** {@code | `NAME` | `default` or empty | module | description |} */
    private static final Pattern ROW = Pattern.compile("^\\|\\s*`([A-Z0-9_]+)`\\s*\\|\\s*(?:`([^`]*)`)?\\s*\\|([^|]*)\\|(.*)\\|\\s*$");

    private record Declared(String defaultValue, String owner, String description) {
    }

    private static Map<String, Declared> declaredInCode() throws ReflectiveOperationException {
        Map<String, Declared> vars = new TreeMap<>();
        for (JavaClass c : JcclClasses.production()) {
            for (JavaField f : c.getFields()) {
                if (!f.isAnnotatedWith(EnvVar.class)) {
                    continue;
                }
                Field field = f.reflect();
                String where = c.getName() + "." + f.getName();
                assertTrue(Modifier.isStatic(field.getModifiers()) && Modifier.isFinal(field.getModifiers())
                        && field.getType() == String.class, where + " must be a static final String");
                field.setAccessible(true);
                String value = (String) field.get(null);
                assertEquals(f.getName(), value, where + ": the constant's value must be its own name");
                EnvVar ann = field.getAnnotation(EnvVar.class);
                Declared previous = vars.put(value, new Declared(ann.defaultValue(), c.getName(), ann.description()));
                if (previous != null) {
                    fail(value + " is declared twice: in " + previous.owner() + " and " + c.getName());
                }
            }
        }
        return vars;
    }

    private static Map<String, String> documentedInReadme() throws IOException {
        String readme = Files.readString(RepositoryLayout.root().resolve("README.md"));
        int start = readme.indexOf(START);
        int end = readme.indexOf(END);
        assertTrue(start >= 0 && end > start, "README.md must hold the table between " + START + " and " + END);
        Map<String, String> rows = new TreeMap<>();
        for (String line : readme.substring(start, end).split("\n")) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                rows.put(m.group(1), m.group(2) == null ? "" : m.group(2));
            }
        }
        return rows;
    }

    @Test
    void readmeTableMatchesTheDeclaredVariables() throws Exception {
        Map<String, Declared> code = declaredInCode();
        Map<String, String> readme = documentedInReadme();
        assertTrue(code.size() >= 4, "the scan should find the spi's own variables: " + code.keySet());

        List<String> problems = new ArrayList<>();
        code.forEach((name, d) -> {
            if (!readme.containsKey(name)) {
                problems.add("missing row: | `" + name + "` | " + (d.defaultValue().isEmpty() ? "" : "`" + d.defaultValue() + "`")
                        + " | " + module(d.owner()) + " | " + d.description() + " |");
            } else if (!readme.get(name).equals(d.defaultValue())) {
                problems.add(name + ": README says default '" + readme.get(name) + "', " + d.owner() + " says '"
                        + d.defaultValue() + "'");
            }
        });
        readme.keySet().stream().filter(n -> !code.containsKey(n))
                .forEach(n -> problems.add(n + " is in README.md but no @EnvVar declares it"));
        assertTrue(problems.isEmpty(), "README.md's configuration table is out of date:\n" + String.join("\n", problems));
    }

    private static String module(String className) {
        String[] parts = className.split("\\.");
        return parts.length > 2 ? parts[2] : className;
    }
}
