package io.jccl.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The rows of a {@code jccl perf} table for machines ({@code --json}) and for people
 * ({@code --plot}: busbw against size as SVG, with the rows of an earlier run's JSON beside it,
 * {@code --baseline}).
 */
final class PerfReport {
    /** One half of a row: out-of-place or in-place. */
    record Result(double timeUs, double algBw, double busBw, long wrong) {
    }

    /** One row of the table. */
    record Row(long bytes, long count, String type, String op, int root, Result outOfPlace, Result inPlace,
               String algorithm) {
    }

    final String collective;
    final int ranks;
    final String transport;
    final String protocols;
    final List<String> command;
    final List<Row> rows = new ArrayList<>();

    PerfReport(String collective, int ranks, String transport, String protocols, List<String> command) {
        this.collective = collective;
        this.ranks = ranks;
        this.transport = transport;
        this.protocols = protocols;
        this.command = command;
    }

    // ------------------------------------------------------------------ JSON

    String toJson() {
        StringBuilder b = new StringBuilder("{\n");
        b.append("  \"tool\": \"jccl perf\",\n");
        b.append("  \"collective\": ").append(quote(collective)).append(",\n");
        b.append("  \"ranks\": ").append(ranks).append(",\n");
        b.append("  \"transport\": ").append(quote(transport)).append(",\n");
        b.append("  \"protocols\": ").append(quote(protocols)).append(",\n");
        b.append("  \"command\": [");
        for (int i = 0; i < command.size(); i++) {
            b.append(i == 0 ? "" : ", ").append(quote(command.get(i)));
        }
        b.append("],\n  \"rows\": [\n");
        for (int i = 0; i < rows.size(); i++) {
            Row r = rows.get(i);
            b.append(String.format(Locale.ROOT, "    {\"size\": %d, \"count\": %d, \"type\": %s, \"redop\": %s, "
                            + "\"root\": %d, \"algorithm\": %s, \"out_of_place\": %s, \"in_place\": %s}%s%n", r.bytes(),
                    r.count(), quote(r.type()), quote(r.op()), r.root(), quote(r.algorithm()), result(r.outOfPlace()),
                    result(r.inPlace()), i + 1 < rows.size() ? "," : ""));
        }
        return b.append("  ]\n}\n").toString();
    }

    private static String result(Result r) {
        return String.format(Locale.ROOT, "{\"time_us\": %s, \"algbw_gbs\": %s, \"busbw_gbs\": %s, \"wrong\": %s}",
                number(r.timeUs()), number(r.algBw()), number(r.busBw()), r.wrong() < 0 ? "null" : Long.toString(r.wrong()));
    }

    private static String number(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.6g", v) : "null";
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : (s == null ? "" : s).toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /**
     * Reads the rows of a report this class wrote (a baseline).
     *
     * @throws IllegalArgumentException naming the file, if it is not such a report
     */
    static PerfReport read(Path file) throws IOException {
        Object parsed;
        try {
            parsed = new Json(Files.readString(file, StandardCharsets.UTF_8)).value();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + " is not JSON: " + e.getMessage());
        }
        if (!(parsed instanceof Map<?, ?> m) || !(m.get("rows") instanceof List<?> rows)) {
            throw new IllegalArgumentException(file + " is not a jccl perf --json report (no \"rows\")");
        }
        PerfReport r = new PerfReport(String.valueOf(m.get("collective")), m.get("ranks") instanceof Number k ? k.intValue() : 0,
                String.valueOf(m.get("transport")), String.valueOf(m.get("protocols")), List.of());
        for (Object o : rows) {
            Map<?, ?> row = (Map<?, ?>) o;
            r.rows.add(new Row(((Number) row.get("size")).longValue(), ((Number) row.get("count")).longValue(),
                    String.valueOf(row.get("type")), String.valueOf(row.get("redop")),
                    ((Number) row.get("root")).intValue(), resultOf(row.get("out_of_place")),
                    resultOf(row.get("in_place")), String.valueOf(row.get("algorithm"))));
        }
        return r;
    }

    private static Result resultOf(Object o) {
        Map<?, ?> m = (Map<?, ?>) o;
        return new Result(num(m.get("time_us")), num(m.get("algbw_gbs")), num(m.get("busbw_gbs")),
                m.get("wrong") == null ? -1 : ((Number) m.get("wrong")).longValue());
    }

    private static double num(Object o) {
        return o == null ? Double.NaN : ((Number) o).doubleValue();
    }

    /** A strict reader of the JSON subset above: objects, arrays, strings, numbers, true, false, null. */
    static final class Json {
        private final String s;
        private int i;

        Json(String s) {
            this.s = s;
        }

        Object value() {
            Object v = parse();
            skip();
            if (i != s.length()) {
                throw new IllegalArgumentException("text after the value at offset " + i);
            }
            return v;
        }

        private Object parse() {
            skip();
            if (i >= s.length()) {
                throw new IllegalArgumentException("unexpected end");
            }
            char c = s.charAt(i);
            if (c == '{') {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                skip();
                if (peek('}')) {
                    return m;
                }
                do {
                    skip();
                    String key = (String) parse();
                    skip();
                    expect(':');
                    m.put(key, parse());
                    skip();
                } while (peek(','));
                expect('}');
                return m;
            }
            if (c == '[') {
                i++;
                List<Object> l = new ArrayList<>();
                skip();
                if (peek(']')) {
                    return l;
                }
                do {
                    l.add(parse());
                    skip();
                } while (peek(','));
                expect(']');
                return l;
            }
            if (c == '"') {
                StringBuilder b = new StringBuilder();
                i++;
                while (i < s.length() && s.charAt(i) != '"') {
                    char ch = s.charAt(i++);
                    if (ch == '\\') {
                        char e = s.charAt(i++);
                        switch (e) {
                            case 'n' -> b.append('\n');
                            case 'r' -> b.append('\r');
                            case 't' -> b.append('\t');
                            case 'u' -> {
                                b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                                i += 4;
                            }
                            default -> b.append(e);
                        }
                    } else {
                        b.append(ch);
                    }
                }
                expect('"');
                return b.toString();
            }
            for (String word : new String[] {"true", "false", "null"}) {
                if (s.startsWith(word, i)) {
                    i += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            if (start == i) {
                throw new IllegalArgumentException("unexpected '" + c + "' at offset " + i);
            }
            return Double.valueOf(s.substring(start, i));
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private boolean peek(char c) {
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw new IllegalArgumentException("expected '" + c + "' at offset " + i);
            }
        }
    }

    // ------------------------------------------------------------------ SVG

    private static final int WIDTH = 900;
    private static final int HEIGHT = 520;
    private static final int LEFT = 80;
    private static final int RIGHT = 200;
    private static final int TOP = 50;
    private static final int BOTTOM = 60;

    /** A series of the chart: busbw by size. */
    private record Series(String label, String color, boolean dashed, List<double[]> points) {
    }

    /**
     * busbw (GB/s) against size (log2 axis): out-of-place and in-place of this run, and of
     * {@code baseline} when given.
     */
    String toSvg(PerfReport baseline) {
        List<Series> series = new ArrayList<>();
        series.add(new Series("out-of-place", "#1f77b4", false, points(true)));
        series.add(new Series("in-place", "#ff7f0e", false, points(false)));
        if (baseline != null) {
            series.add(new Series("baseline out-of-place", "#2ca02c", true, baseline.points(true)));
            series.add(new Series("baseline in-place", "#9467bd", true, baseline.points(false)));
        }
        double minX = Double.MAX_VALUE;
        double maxX = -Double.MAX_VALUE;
        double maxY = 0;
        for (Series s : series) {
            for (double[] p : s.points()) {
                minX = Math.min(minX, p[0]);
                maxX = Math.max(maxX, p[0]);
                maxY = Math.max(maxY, p[1]);
            }
        }
        if (minX > maxX) {
            minX = 0;
            maxX = 1;
        }
        if (maxX - minX < 1) {
            minX -= 0.5;
            maxX += 0.5;
        }
        double yTop = niceCeiling(maxY);
        double plotW = WIDTH - LEFT - RIGHT;
        double plotH = HEIGHT - TOP - BOTTOM;
        final double x0 = minX;
        final double xSpan = maxX - minX;
        java.util.function.DoubleUnaryOperator sx = x -> LEFT + (x - x0) / xSpan * plotW;
        java.util.function.DoubleUnaryOperator sy = y -> TOP + plotH - y / yTop * plotH;
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                + "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">%n", WIDTH, HEIGHT, WIDTH, HEIGHT));
        b.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, HEIGHT));
        b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"24\" font-size=\"16\">%s</text>%n", LEFT,
                xml(collective + ": " + ranks + " ranks over " + transport + (baseline != null ? ", against "
                        + baseline.transport + " (" + baseline.ranks + " ranks)" : ""))));
        // Y grid and labels
        for (int k = 0; k <= 5; k++) {
            double y = yTop * k / 5;
            double py = sy.applyAsDouble(y);
            b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>%n",
                    LEFT, py, LEFT + plotW, py));
            b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", LEFT - 8,
                    py + 4, trim(y)));
        }
        // X ticks: every power of two, labelled every other one when crowded
        int first = (int) Math.ceil(minX);
        int last = (int) Math.floor(maxX);
        int every = Math.max(1, (last - first + 1) / 12 + 1);
        for (int e = first; e <= last; e++) {
            double px = sx.applyAsDouble(e);
            b.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>%n",
                    px, TOP, px, TOP + plotH));
            if ((e - first) % every == 0) {
                b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>%n", px,
                        TOP + plotH + 18, xml(sizeLabel(e))));
            }
        }
        b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                + "stroke=\"black\"/>%n", LEFT, TOP, plotW, plotH));
        b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">size (bytes, log scale)"
                + "</text>%n", LEFT + plotW / 2, HEIGHT - 15));
        b.append(String.format(Locale.ROOT, "<text x=\"20\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 20 "
                + "%.1f)\">busbw (GB/s)</text>%n", TOP + plotH / 2, TOP + plotH / 2));
        int legendY = TOP + 10;
        for (Series s : series) {
            StringBuilder pts = new StringBuilder();
            for (double[] p : s.points()) {
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", sx.applyAsDouble(p[0]), sy.applyAsDouble(p[1])));
            }
            String dash = s.dashed() ? " stroke-dasharray=\"6,4\"" : "";
            b.append(String.format(Locale.ROOT, "<polyline class=\"series\" data-label=\"%s\" fill=\"none\" "
                    + "stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>%n", xml(s.label()), s.color(), dash,
                    pts.toString().trim()));
            for (double[] p : s.points()) {
                b.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>%n",
                        sx.applyAsDouble(p[0]), sy.applyAsDouble(p[1]), s.color()));
            }
            double lx = LEFT + plotW + 15;
            b.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" "
                    + "stroke-width=\"2\"%s/>%n", lx, legendY, lx + 25, legendY, s.color(), dash));
            b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\">%s</text>%n", lx + 32, legendY + 4,
                    xml(s.label())));
            legendY += 20;
        }
        return b.append("</svg>\n").toString();
    }

    /** @return (log2 size, busbw) of each row with a size above 0 */
    private List<double[]> points(boolean outOfPlace) {
        List<double[]> p = new ArrayList<>();
        for (Row r : rows) {
            Result res = outOfPlace ? r.outOfPlace() : r.inPlace();
            if (r.bytes() > 0 && Double.isFinite(res.busBw())) {
                p.add(new double[] {Math.log(r.bytes()) / Math.log(2), res.busBw()});
            }
        }
        return p;
    }

    private static double niceCeiling(double v) {
        if (v <= 0) {
            return 1;
        }
        double step = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * step >= v) {
                return m * step;
            }
        }
        return 10 * step;
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2f", v);
    }

    static String sizeLabel(int log2) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        int unit = Math.min(units.length - 1, Math.max(0, log2 / 10));
        return (1L << (log2 - 10 * unit)) + " " + units[unit];
    }

    private static String xml(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** Writes {@code --json} and {@code --plot} where asked. */
    void write(Path json, Path plot, Path baseline) throws IOException {
        if (json != null) {
            Files.writeString(json, toJson(), StandardCharsets.UTF_8);
        }
        if (plot != null) {
            Files.writeString(plot, toSvg(baseline == null ? null : read(baseline)), StandardCharsets.UTF_8);
        }
    }
}
