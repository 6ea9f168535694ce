package io.jccl.tck;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * A rule of the kit as data: what {@link TckRule} says about a rule method, plus a title derived
 * from the method name. The runner, the reports, the display names and the rule order all read
 * rules through this record.
 *
 * @param id     e.g. {@code conn.3}
 * @param level  required or optional
 * @param title  e.g. {@code one listen comm serves many connections}
 * @param hint   "If this fails, check ..."
 * @param beyondNccl empty if NCCL's plugin documentation requires what the rule checks, else what the
 *                   rule asks beyond it ({@link TckRule#beyondNccl()})
 * @param method the rule's test method
 */
public record ConformanceRule(String id, RuleLevel level, String title, String hint, String beyondNccl, Method method) {
    /** Areas in the order the kit runs them: set-up first, faults (which may break a transport) last. */
    private static final List<String> AREAS = List.of("life", "conn", "xfer", "fault", "coll");

    /** Orders rules by area, then by number: {@code conn.2} before {@code conn.10}. */
    public static final Comparator<ConformanceRule> ORDER = Comparator
            .comparingInt((ConformanceRule r) -> areaRank(r.area()))
            .thenComparing(ConformanceRule::area)
            .thenComparingInt(ConformanceRule::number)
            .thenComparing(ConformanceRule::id);

    /**
     * @return the rule a method declares, if it or the kit method it overrides carries
     *         {@link TckRule} (a vendor may override a rule, e.g. to skip it with a reason)
     */
    public static Optional<ConformanceRule> of(Method method) {
        TckRule rule = method.getAnnotation(TckRule.class);
        for (Class<?> c = method.getDeclaringClass().getSuperclass(); rule == null && c != null; c = c.getSuperclass()) {
            try {
                rule = c.getDeclaredMethod(method.getName(), method.getParameterTypes()).getAnnotation(TckRule.class);
            } catch (NoSuchMethodException e) {
                // Not declared at this level; look further up.
            }
        }
        if (rule == null) {
            return Optional.empty();
        }
        return Optional.of(new ConformanceRule(rule.id(), rule.level(), titleOf(method.getName()), rule.hint(),
                rule.beyondNccl(), method));
    }

    /** @return every rule of a kit class and its superclasses, in run order, each once */
    public static List<ConformanceRule> all(Class<?> kitClass) {
        List<ConformanceRule> rules = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Class<?> c = kitClass; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                of(m).filter(r -> seen.add(r.id())).ifPresent(rules::add);
            }
        }
        rules.sort(ORDER);
        return rules;
    }

    /** @return whether NCCL's plugin documentation requires what the rule checks: a failure is a deviation from it */
    public boolean ncclDocumented() {
        return beyondNccl.isEmpty();
    }

    /** @return the area, e.g. {@code conn} */
    public String area() {
        int dot = id.indexOf('.');
        return dot < 0 ? id : id.substring(0, dot);
    }

    /** @return the number within the area, or -1 if the id has none */
    public int number() {
        int dot = id.indexOf('.');
        try {
            return dot < 0 ? -1 : Integer.parseInt(id.substring(dot + 1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** @return the method name this rule should have, up to its descriptive part: {@code required_conn_3_} */
    public String methodPrefix() {
        return level.label() + "_" + id.replace('.', '_') + "_";
    }

    private static int areaRank(String area) {
        int i = AREAS.indexOf(area);
        return i < 0 ? AREAS.size() : i;
    }

    /** {@code required_conn_3_oneListenCommServesManyConnections} becomes {@code one listen comm serves many connections}. */
    static String titleOf(String methodName) {
        String[] parts = methodName.split("_", 4);
        String words = parts.length == 4 ? parts[3] : methodName;
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < words.length(); i++) {
            char c = words.charAt(i);
            boolean boundary = i > 0 && Character.isUpperCase(c)
                    && (Character.isLowerCase(words.charAt(i - 1))
                        || (i + 1 < words.length() && Character.isLowerCase(words.charAt(i + 1))));
            if (boundary || (i > 0 && Character.isDigit(c) && !Character.isDigit(words.charAt(i - 1)))) {
                sb.append(' ');
            }
            sb.append(c);
        }
        String s = sb.toString();
        StringBuilder out = new StringBuilder();
        for (String w : s.split(" ")) {
            if (out.length() > 0) {
                out.append(' ');
            }
            boolean acronym = w.length() > 1 && w.chars().allMatch(ch -> Character.isUpperCase(ch) || Character.isDigit(ch));
            out.append(acronym ? w : w.toLowerCase(Locale.ROOT));
        }
        return out.toString();
    }
}
