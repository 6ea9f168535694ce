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
                TckCommand.class, CommandLine.HelpCommand.class})
public final class Jccl {

    /** @return a command line ready to execute, for {@link #main} and for tests */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Jccl()).setCaseInsensitiveEnumValuesAllowed(true);
        // Everything after `jccl run ... MAIN` belongs to the program, options included.
        cl.getSubcommands().get("run").setStopAtPositional(true);
        return cl;
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
