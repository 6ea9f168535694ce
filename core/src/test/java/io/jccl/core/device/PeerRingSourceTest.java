package io.jccl.core.device;

import io.jccl.core.kernel.CudaReductionKernel;
import io.jccl.cuda.Nvrtc;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The parts of the P2P ring that need no GPU: its kernels compile (NVRTC, or nvcc where only the
 * toolkit is installed, runs without a GPU, so a broken ring.cu fails here, not first on the GPU
 * machine), the channel count, the shared verdict.
 */
class PeerRingSourceTest {
    @Test
    void theRingKernelsCompileForHopper() throws IOException, InterruptedException {
        String nvcc = nvcc();
        assumeTrue(Nvrtc.isAvailable() || nvcc != null, () -> "neither NVRTC nor nvcc is installed here: "
                + Nvrtc.unavailabilityCause().getMessage());
        // 4- and 2-byte floats, an integer, and an 8-bit float (whose functors exist from compute 8.9)
        for (Object[] pair : new Object[][] {{DataType.FLOAT32, ReduceOp.SUM}, {DataType.BFLOAT16, ReduceOp.MAX},
                {DataType.INT64, ReduceOp.PROD}, {DataType.FLOAT8_E4M3, ReduceOp.MIN}, {DataType.FLOAT16, ReduceOp.AVG}}) {
            DataType type = (DataType) pair[0];
            ReduceOp op = (ReduceOp) pair[1];
            String text = Nvrtc.isAvailable()
                    ? new String(Nvrtc.compile(PeerRing.source(type, op), "ring.cu", "--gpu-architecture=compute_90"),
                    StandardCharsets.US_ASCII)
                    : compileWithNvcc(nvcc, PeerRing.source(type, op));
            String kernel = "jccl_ring_" + CudaReductionKernel.typeName(type) + "_" + op.name().toLowerCase(java.util.Locale.ROOT);
            assertTrue(text.contains(".entry " + kernel), kernel + " is not in the PTX");
            assertTrue(text.contains("jccl_" + CudaReductionKernel.typeName(type) + "_div"), "the division for avg is missing");
            assertTrue(text.contains("globaltimer"), "the kernel's waits are not bounded by the clock");
            assertFalse(text.contains(".entry jccl_" + CudaReductionKernel.typeName(type) + "_sum"),
                    "reduce.cu's own kernels are in the ring's module (JCCL_OPS_ONLY is not honoured)");
        }
    }

    /** @return the CUDA toolkit's compiler, where NVRTC's library is missing but the toolkit is there */
    private static String nvcc() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, "nvcc"))) {
                return Path.of(dir, "nvcc").toString();
            }
        }
        return null;
    }

    /** The same compilation through nvcc (NVRTC's front end and options, as a process). */
    private static String compileWithNvcc(String nvcc, String source) throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory("jccl-ring");
        try {
            Path cu = Files.writeString(dir.resolve("ring.cu"), source);
            Path ptx = dir.resolve("ring.ptx");
            Process p = new ProcessBuilder(nvcc, "-arch=compute_90", "-ptx", cu.toString(), "-o", ptx.toString())
                    .redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(5, TimeUnit.MINUTES), "nvcc did not end in 5 minutes");
            assertEquals(0, p.exitValue(), "nvcc could not compile the ring kernel:\n" + log);
            return Files.readString(ptx, StandardCharsets.US_ASCII);
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }

    @Test
    void everyPremultiplyingTypeHasItsScale() {
        for (DataType type : DataType.values()) {
            if (PeerRing.premultiplies(type, ReduceOp.AVG)) {
                assertTrue(PeerRing.source(type, ReduceOp.AVG).contains("#define RING_SCALE_" + type.name() + "(d)"),
                        "ring.cu has no RING_SCALE_" + type.name() + " for avg on " + type);
            }
        }
    }

    @Test
    void aChannelPer128KiBUpTo32() {
        assertEquals(1, PeerRing.channels(4));
        assertEquals(1, PeerRing.channels(128 << 10));
        assertEquals(2, PeerRing.channels((128 << 10) + 1));
        assertEquals(32, PeerRing.channels(4L << 20));
        assertEquals(32, PeerRing.channels(1L << 30));
    }

    @Test
    void everyRankDecidesAlikeFromTheCards() {
        PeerRing.Card a = new PeerRing.Card(true, "", 1, "0000:18:00.0", false, 0, new byte[0]);
        PeerRing.Card b = new PeerRing.Card(true, "", 2, "0000:2a:00.0", false, 0, new byte[0]);
        PeerRing.Card same = new PeerRing.Card(true, "", 3, "0000:18:00.0", false, 0, new byte[0]);
        assertNull(PeerRing.sharedVerdict(new PeerRing.Card[] {a, b}));
        assertTrue(PeerRing.sharedVerdict(new PeerRing.Card[] {a, b, same}).contains("ranks 0 and 2 share GPU 0000:18:00.0"));
        // ranks may share a GPU when every one of them agrees (JCCL_P2P_SHARED_GPU)
        PeerRing.Card first = new PeerRing.Card(true, "", 5, "0000:18:00.0", true, 0, new byte[0]);
        PeerRing.Card second = new PeerRing.Card(true, "", 6, "0000:18:00.0", true, 0, new byte[0]);
        PeerRing.Card unwilling = new PeerRing.Card(true, "", 5, "0000:18:00.0", false, 0, new byte[0]);
        assertNull(PeerRing.sharedVerdict(new PeerRing.Card[] {first, second}));
        assertTrue(PeerRing.sharedVerdict(new PeerRing.Card[] {first, unwilling}).contains("share GPU"));
        String off = PeerRing.sharedVerdict(new PeerRing.Card[] {a, PeerRing.Card.unwilling("NCCL_P2P_DISABLE=1")});
        assertEquals("rank 1: NCCL_P2P_DISABLE=1", off);
        PeerRing.Card round = PeerRing.Card.fromBytes(new PeerRing.Card(true, "", 7, "0000:18:00.0", false, 0x7f00_0000_0000L,
                new byte[64]).toBytes());
        assertEquals(0x7f00_0000_0000L, round.address());
        assertEquals(64, round.handle().length);
    }
}
