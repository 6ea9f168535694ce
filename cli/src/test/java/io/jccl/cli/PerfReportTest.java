package io.jccl.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PerfReportTest {
    private static PerfReport sample(String transport, double scale) {
        PerfReport r = new PerfReport("all_reduce_perf", 2, transport, "LL up to 65536 B \"a rank\"", List.of("perf", "x"));
        for (int k = 2; k <= 24; k += 2) {
            long bytes = 1L << k;
            r.rows.add(new PerfReport.Row(bytes, bytes / 4, "float", "sum", -1,
                    new PerfReport.Result(10 + k, k * scale / 10, k * scale / 5, 0),
                    new PerfReport.Result(11 + k, k * scale / 11, k * scale / 6, -1), k < 16 ? "LL" : "Ring"));
        }
        return r;
    }

    @Test
    void jsonReadsBackAsTheSameRows(@TempDir Path dir) throws Exception {
        PerfReport r = sample("JcclSocket", 1);
        Path f = dir.resolve("r.json");
        r.write(f, null, null);
        PerfReport back = PerfReport.read(f);
        assertEquals(r.rows.size(), back.rows.size());
        for (int i = 0; i < r.rows.size(); i++) {
            PerfReport.Row a = r.rows.get(i);
            PerfReport.Row b = back.rows.get(i);
            assertEquals(a.bytes(), b.bytes());
            assertEquals(a.algorithm(), b.algorithm());
            assertEquals(a.outOfPlace().busBw(), b.outOfPlace().busBw(), 1e-4 * Math.abs(a.outOfPlace().busBw()));
            assertEquals(a.inPlace().wrong(), b.inPlace().wrong(), "N/A (-1) stays null in JSON");
        }
        assertTrue(Files.readString(f).contains("\"protocols\": \"LL up to 65536 B \\\"a rank\\\"\""), "escaped");
    }

    @Test
    void aFileThatIsNotAReportIsRefusedNamingIt(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("bad.json");
        Files.writeString(f, "{\"rows\": [1, 2");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PerfReport.read(f));
        assertTrue(e.getMessage().contains("bad.json is not JSON"), e.getMessage());
        Files.writeString(f, "{\"tool\": \"other\"}");
        e = assertThrows(IllegalArgumentException.class, () -> PerfReport.read(f));
        assertTrue(e.getMessage().contains("not a jccl perf --json report"), e.getMessage());
    }

    /** The chart: well-formed SVG, one line per series with a point per row, and the baseline's when given. */
    @Test
    void theChartHasOneLinePerSeriesWithAPointPerRow(@TempDir Path dir) throws Exception {
        PerfReport r = sample("JcclSocket", 1);
        Path base = dir.resolve("base.json");
        sample("SHM", 3).write(base, null, null);
        for (boolean withBaseline : new boolean[] {false, true}) {
            String svg = r.toSvg(withBaseline ? PerfReport.read(base) : null);
            Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                    .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
            NodeList lines = doc.getElementsByTagName("polyline");
            List<String> labels = new ArrayList<>();
            for (int i = 0; i < lines.getLength(); i++) {
                Element l = (Element) lines.item(i);
                labels.add(l.getAttribute("data-label"));
                assertEquals(r.rows.size(), l.getAttribute("points").split(" ").length, l.getAttribute("data-label"));
            }
            assertEquals(withBaseline ? List.of("out-of-place", "in-place", "baseline out-of-place", "baseline in-place")
                    : List.of("out-of-place", "in-place"), labels);
            assertTrue(svg.contains(">16 MiB<") && svg.contains(">4 B<"), "size labels");
        }
        assertEquals("1 KiB", PerfReport.sizeLabel(10));
        assertEquals("512 MiB", PerfReport.sizeLabel(29));
    }
}
