package io.jccl.cli;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

/** One {@code jccl} command run in this JVM: its exit code and everything it printed. */
record CliRun(int exitCode, String output) {

    static CliRun of(String... args) {
        StringWriter text = new StringWriter();
        CommandLine cmd = Jccl.commandLine();
        cmd.setOut(new PrintWriter(text));
        cmd.setErr(new PrintWriter(text));
        int rc = cmd.execute(args);
        return new CliRun(rc, text.toString());
    }
}
