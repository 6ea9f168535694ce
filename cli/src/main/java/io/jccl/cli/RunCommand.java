package io.jccl.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.jar.JarFile;

/**
 * {@code jccl run -np N <main class or jar> [args]}: starts N local ranks, each a JVM with
 * torchrun's variables set, so that {@code Communicator.initFromEnvironment()} joins them; prints
 * every rank's output with its rank in front.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Starts N local ranks of a Java program, each a JVM with RANK, WORLD_SIZE, MASTER_ADDR, "
                + "MASTER_PORT and JCCL_COMM_SECRET set (torchrun's variables), so that "
                + "Communicator.initFromEnvironment() joins them. Prints each line with its rank in front.",
                "The program's classes come from JCCL_CLASSPATH or from the jar given. Exit status: the first "
                        + "non-zero status of a rank, else 0."})
final class RunCommand implements Callable<Integer> {

    @Option(names = {"-np", "--np"}, paramLabel = "N", defaultValue = "2",
            description = "Number of ranks (default: ${DEFAULT-VALUE}).")
    int ranks;

    @Option(names = "--hosts", paramLabel = "NS[,NS...]", split = ",",
            description = "Start the ranks in these network namespaces, one per host (bench/netns/hosts.sh up N makes "
                    + "them), in blocks of consecutive ranks; each host its own NCCL_HOSTID: shared memory inside a "
                    + "host, the network between hosts.")
    List<String> hosts = new ArrayList<>();

    @Option(names = "--elastic",
            description = "Keep the job going when a rank exits with a non-zero status (the others shrink their "
                    + "communicator, as io.jccl.cli.examples.ElasticTraining does); the ranks get JCCL_ELASTIC_DIR. "
                    + "Exit status: that of the ranks that lasted.")
    boolean elastic;

    @Option(names = "--respawn", paramLabel = "N", defaultValue = "0",
            description = "With --elastic: start a new process in place of a rank that died, with JCCL_ELASTIC_JOIN=1, "
                    + "up to N times in all (default: ${DEFAULT-VALUE}).")
    int respawns;

    @Parameters(index = "0", paramLabel = "MAIN", description = "A main class (on JCCL_CLASSPATH), or a jar with a Main-Class.")
    String target;

    @Parameters(index = "1..*", paramLabel = "ARG", description = "Arguments of the program.")
    List<String> args = new ArrayList<>();

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (ranks < 1) {
            System.err.println("jccl run: -np must be at least 1");
            return 2;
        }
        if (respawns < 0 || respawns > 0 && !elastic) {
            System.err.println("jccl run: --respawn " + respawns + ": " + (respawns < 0 ? "must be 0 or more"
                    : "needs --elastic"));
            return 2;
        }
        List<String> javaArgs = new ArrayList<>();
        String classPath = System.getProperty("java.class.path");
        String mainClass = target;
        if (target.endsWith(".jar")) {
            Path jar = Path.of(target);
            if (!Files.isRegularFile(jar)) {
                System.err.println("jccl run: no such jar: " + target);
                return 2;
            }
            try (JarFile j = new JarFile(jar.toFile())) {
                mainClass = j.getManifest() == null ? null : j.getManifest().getMainAttributes().getValue("Main-Class");
            }
            if (mainClass == null) {
                System.err.println("jccl run: " + target + " names no Main-Class in its manifest");
                return 2;
            }
            classPath = jar.toAbsolutePath() + File.pathSeparator + classPath;
        }
        javaArgs.add("-cp");
        javaArgs.add(classPath);
        javaArgs.add(mainClass);
        javaArgs.addAll(args);
        try {
            return LocalJob.run(javaArgs, ranks, hosts, true, new LocalJob.Elastic(elastic, respawns), System.out,
                    System.err);
        } catch (IllegalArgumentException e) {
            System.err.println("jccl run: " + e.getMessage());
            return 2;
        }
    }
}
