package io.jccl.core;

import io.jccl.core.config.CoreConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Rank, size and root from torchrun's, Open MPI's or Slurm's variables (system properties stand in for them). */
class LaunchEnvironmentTest {
    static final List<String> VARS = List.of(CoreConfig.RANK, CoreConfig.WORLD_SIZE, CoreConfig.MASTER_ADDR,
            CoreConfig.MASTER_PORT, CoreConfig.NCCL_COMM_ID, CoreConfig.OMPI_COMM_WORLD_RANK,
            CoreConfig.OMPI_COMM_WORLD_SIZE, CoreConfig.SLURM_PROCID, CoreConfig.SLURM_NTASKS);

    @AfterEach
    void clear() {
        VARS.forEach(System::clearProperty);
    }

    @Test
    void torchrunStyle() {
        System.setProperty(CoreConfig.RANK, "3");
        System.setProperty(CoreConfig.WORLD_SIZE, "8");
        System.setProperty(CoreConfig.MASTER_ADDR, "127.0.0.1");
        System.setProperty(CoreConfig.MASTER_PORT, "29500");
        LaunchEnvironment e = LaunchEnvironment.read();
        assertEquals(3, e.rank());
        assertEquals(8, e.size());
        assertEquals(29500, e.root().getPort());
        assertTrue(e.source().contains("torchrun"));
    }

    @Test
    void openMpiAndSlurmWithNcclCommIdTakingPrecedence() {
        System.setProperty(CoreConfig.OMPI_COMM_WORLD_RANK, "1");
        System.setProperty(CoreConfig.OMPI_COMM_WORLD_SIZE, "2");
        System.setProperty(CoreConfig.NCCL_COMM_ID, "127.0.0.1:4242");
        System.setProperty(CoreConfig.MASTER_ADDR, "127.0.0.1");
        System.setProperty(CoreConfig.MASTER_PORT, "1");
        LaunchEnvironment e = LaunchEnvironment.read();
        assertEquals(1, e.rank());
        assertEquals(4242, e.root().getPort());
        assertTrue(e.source().contains("Open MPI"));
        clear();
        System.setProperty(CoreConfig.SLURM_PROCID, "0");
        System.setProperty(CoreConfig.SLURM_NTASKS, "4");
        System.setProperty(CoreConfig.NCCL_COMM_ID, "[::1]:4243");
        e = LaunchEnvironment.read();
        assertEquals(4, e.size());
        assertEquals(4243, e.root().getPort());
    }

    @Test
    void missingOrMalformedVariablesAreNamed() {
        JcclException none = assertThrows(JcclException.class, LaunchEnvironment::read);
        assertTrue(none.getMessage().contains("RANK"), none.getMessage());
        System.setProperty(CoreConfig.RANK, "0");
        System.setProperty(CoreConfig.WORLD_SIZE, "2");
        JcclException noRoot = assertThrows(JcclException.class, LaunchEnvironment::read);
        assertTrue(noRoot.getMessage().contains("MASTER_ADDR"), noRoot.getMessage());
        System.setProperty(CoreConfig.NCCL_COMM_ID, "nohost");
        assertThrows(JcclException.class, LaunchEnvironment::read);
        System.setProperty(CoreConfig.RANK, "2");
        System.setProperty(CoreConfig.NCCL_COMM_ID, "127.0.0.1:1");
        JcclException bad = assertThrows(JcclException.class, LaunchEnvironment::read);
        assertTrue(bad.getMessage().contains("RANK=2"), bad.getMessage());
    }
}
