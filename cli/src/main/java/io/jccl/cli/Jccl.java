package io.jccl.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of {@code bin/jccl}. */
@Command(name = "jccl",
        mixinStandardHelpOptions = true,
        versionProvider = JcclVersion.class,
        description = "JCCL: NCCL-style network transports in Java.",
        subcommands = {PluginsCommand.class, PerfCommand.class, RunCommand.class, BenchCommand.class,
                TckCommand.class, CommandLine.HelpCommand.class})
public final class Jccl {

    /** @return a command line ready to execute, for {@link #main} and for tests */
    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Jccl()).setCaseInsensitiveEnumValuesAllowed(true);
        // Everything after `jccl run ... MAIN` belongs to the program, options included.
        cl.getSubcommands().get("run").setStopAtPositional(true);
        return cl;
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }
}
