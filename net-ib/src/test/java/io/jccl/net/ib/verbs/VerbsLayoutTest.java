package io.jccl.net.ib.verbs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.PaddingLayout;
import java.lang.foreign.UnionLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Every {@link IbvLayouts} layout against the C compiler's view of the system's
 * {@code infiniband/verbs.h}: a C program generated from the layouts' names prints
 * {@code offsetof} and {@code sizeof} of every named member (nested members by their C designator,
 * e.g. {@code ah_attr.grh.sgid_index}) and {@code sizeof}/{@code _Alignof} of every struct; each
 * must equal the Java layout's.
 *
 * <p>Needs {@code gcc} and Debian's {@code libibverbs-dev}, no RDMA device; skips with the reason
 * when they are missing. If this fails, the layout disagrees with the header: fix the layout (a
 * member's type, its padding), never the expected values.
 */
class VerbsLayoutTest {

    /** One line of the C program's output: {@code <type> <member> <offset> <size>}. */
    private record Member(long offset, long size) {
    }

    @Test
    void layoutsMatchTheSystemHeaders(@TempDir Path dir) throws Exception {
        Map<String, Member> expected = new LinkedHashMap<>();
        StringBuilder c = new StringBuilder("""
                #include <stddef.h>
                #include <stdio.h>
                #include <poll.h>
                #include <infiniband/verbs.h>
                int main(void) {
                """);
        for (GroupLayout layout : IbvLayouts.all()) {
            String type = cType(layout);
            String name = layout.name().orElseThrow();
            expected.put(name + " sizeof", new Member(0, layout.byteSize()));
            expected.put(name + " alignof", new Member(0, layout.byteAlignment()));
            c.append("  printf(\"%s sizeof 0 %zu\\n\", \"").append(name).append("\", sizeof(").append(type)
                    .append("));\n");
            c.append("  printf(\"%s alignof 0 %zu\\n\", \"").append(name).append("\", _Alignof(").append(type)
                    .append("));\n");
            members(layout, "", 0, (path, offset, size) -> {
                expected.put(name + " " + path, new Member(offset, size));
                c.append("  printf(\"%s %s %zu %zu\\n\", \"").append(name).append("\", \"").append(path)
                        .append("\", offsetof(").append(type).append(", ").append(path).append("), sizeof(((")
                        .append(type).append(" *)0)->").append(path).append("));\n");
            });
        }
        c.append("  return 0;\n}\n");

        Path source = dir.resolve("layouts.c");
        Files.writeString(source, c);
        Path binary = dir.resolve("layouts");
        Run compile = run(dir, "gcc", "-std=gnu11", "-o", binary.toString(), source.toString());
        assumeTrue(compile.output != null, "gcc not found: install gcc to check the verbs layouts");
        assumeTrue(compile.rc == 0 || !compile.output.contains("infiniband/verbs.h: No such file"),
                "infiniband/verbs.h not found: install Debian's libibverbs-dev to check the verbs layouts");
        assertEquals(0, compile.rc, "the generated C program does not compile; a layout names a member that "
                + "verbs.h lacks:\n" + compile.output);

        Run out = run(dir, binary.toString());
        assertEquals(0, out.rc, out.output);
        Map<String, Member> actual = new LinkedHashMap<>();
        for (String line : out.output.split("\n")) {
            String[] f = line.trim().split(" ");
            if (f.length == 4) {
                actual.put(f[0] + " " + f[1], new Member(Long.parseLong(f[2]), Long.parseLong(f[3])));
            }
        }
        List<String> problems = new ArrayList<>();
        expected.forEach((k, v) -> {
            Member a = actual.get(k);
            if (!v.equals(a)) {
                problems.add(k + ": Java (offset " + v.offset + ", size " + v.size + "), C " + (a == null ? "missing"
                        : "(offset " + a.offset + ", size " + a.size + ")"));
            }
        });
        assertTrue(problems.isEmpty(), "layouts disagree with verbs.h:\n" + String.join("\n", problems));
        assertTrue(expected.size() > 150, "the check should cover every member: " + expected.size());
    }

    @Test
    void opsTableOffsetsAreTheOnesNcclUses() {
        // NCCL's ibvcore.h: ops at 8, poll_cq slot 11, post_send slot 25, post_recv slot 26.
        assertEquals(96, IbvLayouts.Context.OPS_POLL_CQ);
        assertEquals(208, IbvLayouts.Context.OPS_POST_SEND);
        assertEquals(216, IbvLayouts.Context.OPS_POST_RECV);
    }

    private interface MemberSink {
        void accept(String path, long offset, long size);
    }

    private static void members(GroupLayout group, String prefix, long base, MemberSink sink) {
        long offset = 0;
        for (MemoryLayout m : group.memberLayouts()) {
            long at = group instanceof UnionLayout ? 0 : offset;
            if (!(m instanceof PaddingLayout) && m.name().isPresent()) {
                String path = prefix + m.name().get();
                sink.accept(path, base + at, m.byteSize());
                if (m instanceof GroupLayout g) {
                    members(g, path + ".", base + at, sink);
                }
            }
            offset += m.byteSize();
        }
    }

    private static String cType(GroupLayout layout) {
        return (layout instanceof UnionLayout ? "union " : "struct ") + layout.name().orElseThrow();
    }

    private record Run(int rc, String output) {
    }

    private static Run run(Path dir, String... command) throws InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            return new Run(-1, null);
        }
        try {
            byte[] bytes = p.getInputStream().readAllBytes();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", command) + " did not finish");
            return new Run(p.exitValue(), new String(bytes, StandardCharsets.UTF_8));
        } catch (IOException e) {
            p.destroyForcibly();
            return new Run(-1, e.toString());
        }
    }
}
