package io.jccl.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.util.List;

/** Entry point of {@code bin/jccl}. */
@Command(name = "jccl",
        mixinStandardHelpOptions = true,
        versionProvider = JcclVersion.class,
        description = "JCCL: NCCL-style network transports in Java.",
        subcommands = {PluginsCommand.class, PerfCommand.class, RunCommand.class, BenchCommand.class, TopoCommand.class,
                TckCommand.class, PackageCommand.class, CollNetAggregatorCommand.class, CommandLine.HelpCommand.class})
public final class Jccl {

    /** @return a command line ready to execute, for {@link #main} and for tests */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Jccl()).setCaseInsensitiveEnumValuesAllowed(true);
        // Everything after `jccl run ... MAIN` belongs to the program, options included.
        cl.getSubcommands().get("run").setStopAtPositional(true);
        cl.setExecutionExceptionHandler(Jccl::oneLine);
        return cl;
    }

    /**
     * What escapes a command: one line naming the command and the problem (a bad setting such as
     * {@code NCCL_BUFFSIZE=abc} says what it accepts), exit status 2 for bad input and 1 otherwise;
     * the stack trace only where {@code NCCL_DEBUG} asks for INFO or TRACE.
     */
    static int oneLine(Exception e, CommandLine cl, CommandLine.ParseResult parsed) {
        String command = parsed.subcommand() != null ? "jccl " + parsed.subcommand().commandSpec().name() : "jccl";
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        cl.getErr().println(command + ": " + message.lines().findFirst().orElse(message));
        String debug = System.getenv("NCCL_DEBUG");
        if (debug != null && (debug.equalsIgnoreCase("INFO") || debug.equalsIgnoreCase("TRACE"))) {
            e.printStackTrace(cl.getErr());
        }
        cl.getErr().flush();
        boolean badInput = e instanceof IllegalArgumentException
                || e instanceof io.jccl.core.JcclException j && (j.result() == io.jccl.spi.NetResult.INVALID_ARGUMENT
                        || j.result() == io.jccl.spi.NetResult.INVALID_USAGE);
        return badInput ? 2 : 1;
    }

    /**
     * Runs a command; one that loads native plugins runs in a child JVM ({@link NativeCrashGuard}),
     * so that a plugin that faults cannot take this one down.
     */
    public static void main(String[] args) throws Exception {
        List<String> libraries = NativeCrashGuard.nativeLibraries(args, System.getenv());
        System.exit(libraries.isEmpty() ? commandLine().execute(args) : NativeCrashGuard.run(args, libraries, System.err));
    }
}
