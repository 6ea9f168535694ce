package io.jccl.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** Entry point of {@code bin/jccl}. */
@Command(name = "jccl",
        mixinStandardHelpOptions = true,
        versionProvider = JcclVersion.class,
        description = "JCCL: NCCL-style network transports in Java.",
        subcommands = {PluginsCommand.class, BenchCommand.class, TckCommand.class, CommandLine.HelpCommand.class})
public final class Jccl {

    /** @return a command line ready to execute, for {@link #main} and for tests */
    public static CommandLine commandLine() {
        return new CommandLine(new Jccl()).setCaseInsensitiveEnumValuesAllowed(true);
    }

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }
}
