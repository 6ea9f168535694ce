package io.jccl.cli.examples;

import io.jccl.cli.CliConfig;
import io.jccl.core.Communicator;
import io.jccl.core.JcclException;
import io.jccl.core.UniqueId;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import io.jccl.spi.config.Env;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;

/**
 * An elastic training-style loop: every step all-reduces a "gradient" and checks it; a rank that
 * dies does not stop the others: they shrink their communicator and redo the step, and, with
 * {@code grow}, admit a replacement process and go on at the original size.
 *
 * <pre>
 * bin/jccl run -np 4 --elastic --respawn 1 io.jccl.cli.examples.ElasticTraining 200 2 50 grow
 * </pre>
 * runs 200 steps on 4 ranks; rank 2 crashes at step 50 (a simulated crash: the JVM halts with status
 * 3); the other three shrink to 3 ranks, rank 0 of them writes the grow id into
 * {@code JCCL_ELASTIC_DIR}, jccl run starts a new process with {@code JCCL_ELASTIC_JOIN=1}, which
 * reads it and joins as the new rank 3, and all four finish the 200 steps.
 *
 * <p>Arguments: {@code STEPS [CRASH_RANK CRASH_STEP [grow]]}.
 */
public final class ElasticTraining {
    private static final int PARAMETERS = 1 << 16;
    private static final long JOIN_WAIT_SECONDS = 60;

    private ElasticTraining() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        int steps = Integer.parseInt(args[0]);
        int crashRank = args.length > 2 ? Integer.parseInt(args[1]) : -1;
        int crashStep = args.length > 2 ? Integer.parseInt(args[2]) : -1;
        boolean grow = args.length > 3 && args[3].equals("grow");
        String dirName = Env.get(CliConfig.JCCL_ELASTIC_DIR);
        Path dir = dirName == null || dirName.isBlank() ? null : Path.of(dirName);
        int worldSize = Integer.parseInt(System.getenv().getOrDefault("WORLD_SIZE", "1"));
        boolean joining = "1".equals(Env.get(CliConfig.JCCL_ELASTIC_JOIN));

        Communicator comm;
        int step;
        if (joining) {
            Joined j = join(dir);
            comm = j.comm();
            step = j.step();
            System.out.printf("joined as rank %d of %d at step %d%n", comm.rank(), comm.size(), step);
        } else {
            comm = Communicator.initFromEnvironment();
            step = 0;
        }
        try (Arena arena = Arena.ofShared()) {
            MemorySegment gradient = arena.allocate(4L * PARAMETERS, 64);
            double loss = 0;
            // Ranks renumber when the communicator shrinks: only the first communicator's rank crashes.
            boolean first = !joining;
            while (step < steps) {
                if (first && comm.rank() == crashRank && step == crashStep) {
                    System.out.printf("rank %d: crashing at step %d (simulated: the JVM halts)%n", comm.rank(), step);
                    System.out.flush();
                    Runtime.getRuntime().halt(3);
                }
                try {
                    loss = trainStep(comm, gradient, step);
                    step++;
                } catch (JcclException e) {
                    comm = recover(comm, e, step, grow ? worldSize : 0, dir);
                    first = false;
                }
            }
            System.out.printf("rank %d of %d: %d steps done, last loss %.3f%n", comm.rank(), comm.size(), steps, loss);
        }
        comm.close();
    }

    /** One step: every rank's gradient (its rank + 1) summed; every element is checked. @return a made-up loss */
    private static double trainStep(Communicator comm, MemorySegment gradient, int step) {
        int n = comm.size();
        gradient.fill((byte) 0);
        for (int i = 0; i < PARAMETERS; i++) {
            gradient.setAtIndex(ValueLayout.JAVA_FLOAT, i, comm.rank() + 1);
        }
        comm.allReduce(gradient, gradient, PARAMETERS, DataType.FLOAT32, ReduceOp.SUM);
        float expected = n * (n + 1) / 2f;
        for (int i = 0; i < PARAMETERS; i++) {
            if (gradient.getAtIndex(ValueLayout.JAVA_FLOAT, i) != expected) {
                throw new IllegalStateException("step " + step + ": element " + i + " is "
                        + gradient.getAtIndex(ValueLayout.JAVA_FLOAT, i) + ", not " + expected);
            }
        }
        return 1.0 / (1 + step);
    }

    /**
     * The communicator failed: shrink without the rank that failed and, to keep {@code size}
     * ranks, publish a grow id in {@code dir} and wait for replacements to join.
     */
    private static Communicator recover(Communicator comm, JcclException e, int step, int size, Path dir)
            throws IOException {
        int dead = e.failedRank();
        if (dead < 0 || dead == comm.rank()) {
            throw e;
        }
        System.out.printf("rank %d: step %d failed (%s); going on without rank %d%n", comm.rank(), step,
                e.getMessage(), dead);
        long start = System.nanoTime();
        Communicator small = comm.shrink(dead);
        comm.abort();
        System.out.printf("rank %d: now rank %d of %d (shrunk in %d ms)%n", comm.rank(), small.rank(), small.size(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        if (size <= small.size() || dir == null) {
            return small;
        }
        UniqueId id = null;
        if (small.rank() == 0) {
            id = small.growId();
            // Written whole, then renamed: a joining process never reads half a file.
            Path tmp = dir.resolve("grow.tmp");
            Files.writeString(tmp, id + " " + small.size() + " " + size + " " + step);
            Files.move(tmp, dir.resolve("grow"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        start = System.nanoTime();
        Communicator grown = small.grow(size, id);
        small.close();
        System.out.printf("rank %d of %d again (grew in %d ms)%n", grown.rank(), grown.size(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        return grown;
    }

    private record Joined(Communicator comm, int step) {
    }

    /** A replacement process: waits for the survivors' grow id, claims a free rank, joins. */
    private static Joined join(Path dir) throws IOException, InterruptedException {
        if (dir == null) {
            throw new IllegalStateException(CliConfig.JCCL_ELASTIC_JOIN + " is set but " + CliConfig.JCCL_ELASTIC_DIR
                    + " is not: start the job with jccl run --elastic");
        }
        Path file = dir.resolve("grow");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(JOIN_WAIT_SECONDS);
        while (!Files.exists(file)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no grow id in " + dir + " after " + JOIN_WAIT_SECONDS + " s");
            }
            Thread.sleep(20);
        }
        String[] parts = Files.readString(file).trim().split(" ");
        UniqueId id = UniqueId.parse(parts[0]);
        int from = Integer.parseInt(parts[1]);
        int size = Integer.parseInt(parts[2]);
        int step = Integer.parseInt(parts[3]);
        for (int rank = from; rank < size; rank++) {
            try {
                Files.createFile(dir.resolve("claim-" + parts[0].substring(0, 16) + "-" + rank));
                return new Joined(Communicator.init(size, id, rank), step);
            } catch (FileAlreadyExistsException taken) {
                // Another replacement took this rank.
            }
        }
        throw new IllegalStateException("every new rank of the grown communicator is taken");
    }
}
