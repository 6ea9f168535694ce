package io.jccl.net.ib.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * perftest's {@code ib_write_bw} and {@code ib_write_lat} on the same device, run as a server and a
 * client process on this host (as {@code selftest.sh} of the SoftRoCE VM runs them), for the
 * baseline beside each JcclIB figure.
 */
final class Perftest {
    private final String device;
    private final int gidIndex;
    private int port = 18700;

    Perftest(String device, int gidIndex) {
        this.device = device;
        this.gidIndex = gidIndex;
    }

    /** @return whether {@code ib_write_bw} can be started */
    static boolean installed() {
        try {
            Process p = new ProcessBuilder("ib_write_bw", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** @return {@code ib_write_bw}'s average bandwidth in Gbit/s, or NaN if it failed */
    double writeBandwidth(long size, int iterations) throws InterruptedException {
        List<String> out = pair("ib_write_bw", "--report_gbits", "-s", Long.toString(size), "-n",
                Integer.toString(iterations));
        for (String line : out) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 5 && f[0].equals(Long.toString(size))) {
                return Double.parseDouble(f[3]);
            }
        }
        return Double.NaN;
    }

    /** @return {@code ib_write_lat}'s {typical, average} one-way latency of 8 bytes in us, or NaNs */
    double[] writeLatency(int iterations) throws InterruptedException {
        List<String> out = pair("ib_write_lat", "-s", "8", "-n", Integer.toString(iterations));
        for (String line : out) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 6 && f[0].equals("8")) {
                return new double[] {Double.parseDouble(f[4]), Double.parseDouble(f[5])};
            }
        }
        return new double[] {Double.NaN, Double.NaN};
    }

    /** Runs the server, then the client against it (retried until the server listens). @return the client's output */
    private List<String> pair(String tool, String... args) throws InterruptedException {
        int p = port++;
        List<String> cmd = new ArrayList<>(List.of(tool, "-d", device, "-x", Integer.toString(gidIndex), "-F",
                "-p", Integer.toString(p)));
        cmd.addAll(List.of(args));
        Process server;
        try {
            server = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            return List.of();
        }
        List<String> client = new ArrayList<>(cmd);
        client.add("127.0.0.1");
        List<String> out = List.of();
        try {
            for (int attempt = 0; attempt < 20; attempt++) {
                Thread.sleep(250);
                Process c = new ProcessBuilder(client).redirectErrorStream(true).start();
                String text = new String(c.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                c.waitFor();
                out = text.lines().toList();
                if (c.exitValue() == 0 || !(text.contains("Couldn't connect") || text.contains("Unable to"))) {
                    break;
                }
            }
        } catch (IOException e) {
            out = List.of();
        } finally {
            if (!server.waitFor(60, TimeUnit.SECONDS)) {
                server.destroyForcibly().waitFor();
            }
        }
        return out;
    }
}
