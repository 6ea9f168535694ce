package io.jccl.cli;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Locale;

/**
 * nccl-tests' output, character for character ({@code src/util.cu}: {@code writeResultHeader},
 * {@code writeBenchmarkLinePreamble}, {@code writeBenchmarkLineBody}, {@code writeResultFooter}).
 */
final class PerfTable {
    private PerfTable() {
    }

    /**
     * The three header lines of the result table (after a {@code #} line). One column more than
     * nccl-tests' at the end: the algorithm JCCL's tuner chose for the row ({@link #algorithm}).
     */
    static String header() {
        return "#\n"
                + String.format(Locale.ROOT, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          %n",
                "", "", "", "", "")
                + String.format(Locale.ROOT, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s%n",
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                "#wrong", " algo")
                + String.format(Locale.ROOT, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %s%n",
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", "");
    }

    /** {@code writeBenchmarkLinePreamble}. */
    static String preamble(long bytes, long count, String type, String op, int root) {
        return String.format(Locale.ROOT, "%12d  %12d  %8s  %6s  %6s", bytes, count, type, op,
                String.format(Locale.ROOT, "%6d", root));
    }

    /** {@code writeBenchmarkLineBody}; {@code wrong < 0} prints {@code N/A} (no check). */
    static String body(double timeUs, double algBw, double busBw, long wrong) {
        String t = floatStr(timeUs, 7);
        String a = floatStr(algBw, 6);
        String b = floatStr(busBw, 6);
        return wrong < 0 ? String.format(Locale.ROOT, "  %7s  %6s  %6s    N/A", t, a, b)
                : String.format(Locale.ROOT, "  %7s  %6s  %6s  %6s", t, a, b, cG(wrong));
    }

    /** The last column: what ran the row, e.g. {@code LL}, {@code Tree}, {@code Ring}. */
    static String algorithm(String algorithm) {
        return "  " + algorithm;
    }

    /** The footer: errors and the average bus bandwidth. */
    static String footer(int errors, double avgBusBw, String program) {
        return String.format(Locale.ROOT, "# %-20s : %d %s%n", "Out of bounds values", errors, errors != 0 ? "FAILED" : "OK")
                + String.format(Locale.ROOT, "# %-20s : %s %s%n", "Avg bus bandwidth", cG(avgBusBw), "")
                + "#\n"
                + "# Collective test concluded: " + program + "\n";
    }

    /** {@code getFloatStr}: the widest of %.2f, %.1f, %.0f that fits, else scientific. */
    static String floatStr(double value, int width) {
        for (int decimals = 2; decimals >= 0; decimals--) {
            String s = String.format(Locale.ROOT, "%" + width + "." + decimals + "f", value);
            if (s.length() <= width) {
                return s;
            }
        }
        return String.format(Locale.ROOT, width >= 7 ? "%" + width + ".1e" : "%" + width + ".0e", value);
    }

    /** C's {@code %g}: six significant digits, no trailing zeros, scientific outside [1e-4, 1e6). */
    static String cG(double v) {
        if (v == 0 || Double.isNaN(v) || Double.isInfinite(v)) {
            return v == 0 ? "0" : Double.toString(v);
        }
        BigDecimal d = new BigDecimal(v).round(new MathContext(6));
        int exponent = d.precision() - d.scale() - 1;
        if (exponent < -4 || exponent >= 6) {
            String mantissa = d.movePointLeft(exponent).stripTrailingZeros().toPlainString();
            return mantissa + String.format(Locale.ROOT, "e%c%02d", exponent < 0 ? '-' : '+', Math.abs(exponent));
        }
        String plain = d.stripTrailingZeros().toPlainString();
        return plain;
    }
}
