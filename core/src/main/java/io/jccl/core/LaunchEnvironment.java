package io.jccl.core;

import io.jccl.core.config.CoreConfig;
import io.jccl.spi.NetResult;
import io.jccl.spi.config.Env;

import java.net.InetSocketAddress;

/**
 * Rank, size and bootstrap root as a launcher describes them.
 *
 * @param rank   this process's rank
 * @param size   the number of ranks
 * @param root   where rank 0 runs the bootstrap root
 * @param source which variables said so, for messages
 */
public record LaunchEnvironment(int rank, int size, InetSocketAddress root, String source) {

    /**
     * Reads torchrun's {@code RANK}/{@code WORLD_SIZE}, else Open MPI's {@code OMPI_COMM_WORLD_RANK}/
     * {@code OMPI_COMM_WORLD_SIZE}, else Slurm's {@code SLURM_PROCID}/{@code SLURM_NTASKS}; and the
     * root from {@code NCCL_COMM_ID} ({@code host:port}), else {@code MASTER_ADDR}/{@code MASTER_PORT}.
     *
     * @throws JcclException {@link NetResult#INVALID_USAGE} naming what is missing or malformed
     */
    public static LaunchEnvironment read() {
        String[][] launchers = {
                {CoreConfig.RANK, CoreConfig.WORLD_SIZE, "torchrun"},
                {CoreConfig.OMPI_COMM_WORLD_RANK, CoreConfig.OMPI_COMM_WORLD_SIZE, "Open MPI"},
                {CoreConfig.SLURM_PROCID, CoreConfig.SLURM_NTASKS, "Slurm"},
        };
        for (String[] l : launchers) {
            if (Env.isSet(l[0]) && Env.isSet(l[1])) {
                int rank = integer(l[0]);
                int size = integer(l[1]);
                if (size < 1 || rank < 0 || rank >= size) {
                    throw JcclException.invalidUsage(l[0] + "=" + rank + " and " + l[1] + "=" + size
                            + " do not describe a rank of a job");
                }
                return new LaunchEnvironment(rank, size, readRoot(), l[2] + " (" + l[0] + ", " + l[1] + ")");
            }
        }
        throw JcclException.invalidUsage("no launcher variables: set RANK and WORLD_SIZE (torchrun), or run under "
                + "mpirun (OMPI_COMM_WORLD_RANK/SIZE) or srun (SLURM_PROCID/SLURM_NTASKS); `jccl run -np N` sets them");
    }

    private static InetSocketAddress readRoot() {
        String commId = Env.get(CoreConfig.NCCL_COMM_ID);
        if (commId != null) {
            int colon = commId.lastIndexOf(':');
            if (colon <= 0) {
                throw JcclException.invalidUsage(CoreConfig.NCCL_COMM_ID + "=" + commId + " is not host:port");
            }
            String host = commId.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            return address(host, port(CoreConfig.NCCL_COMM_ID, commId.substring(colon + 1)));
        }
        String host = Env.get(CoreConfig.MASTER_ADDR);
        String port = Env.get(CoreConfig.MASTER_PORT);
        if (host == null || port == null) {
            throw JcclException.invalidUsage("no bootstrap root: set " + CoreConfig.NCCL_COMM_ID + "=host:port, or "
                    + CoreConfig.MASTER_ADDR + " and " + CoreConfig.MASTER_PORT + " (rank 0 listens there)");
        }
        return address(host, port(CoreConfig.MASTER_PORT, port));
    }

    private static InetSocketAddress address(String host, int port) {
        InetSocketAddress a = new InetSocketAddress(host, port);
        if (a.isUnresolved()) {
            throw new JcclException(NetResult.INVALID_USAGE, "cannot resolve the bootstrap root's host " + host);
        }
        return a;
    }

    private static int port(String name, String value) {
        try {
            int p = Integer.parseInt(value.trim());
            if (p < 1 || p > 65535) {
                throw new NumberFormatException();
            }
            return p;
        } catch (NumberFormatException e) {
            throw JcclException.invalidUsage(name + ": '" + value + "' is not a port (1..65535)");
        }
    }

    private static int integer(String name) {
        try {
            return Integer.parseInt(Env.get(name));
        } catch (NumberFormatException e) {
            throw JcclException.invalidUsage(name + "=" + Env.get(name) + " is not an integer");
        }
    }
}
