package io.jccl.shim;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * What the shim tells NCCL a transport with CUDA pointer support takes. GPUDirect through a
 * transport that stages device memory on CUDA streams deadlocks when those streams share CUDA's
 * hardware queues with NCCL's kernels (README, "GPUDirect under NCCL"): the shim passes CUDA
 * support on only with JCCL_SHIM_GDR=1 and CUDA_DEVICE_MAX_CONNECTIONS of at least 32, and says
 * once why not otherwise. If this fails, check props_of in shim_net.c.
 */
class ShimGdrGateTest {

    @ParameterizedTest(name = "JCCL_SHIM_GDR={0}, CUDA_DEVICE_MAX_CONNECTIONS={1}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
            "0 | 32 | 1 |",
            "  | 32 | 1 |",
            "1 | 32 | 3 |",
            "1 | 64 | 3 |",
            "1 |    | 1 | CUDA_DEVICE_MAX_CONNECTIONS is unset (CUDA's default, 8),",
            "1 | 8  | 1 | CUDA_DEVICE_MAX_CONNECTIONS is 8,",
            "1 | 1  | 1 | CUDA_DEVICE_MAX_CONNECTIONS is 1,",
            "1 | lots | 1 | CUDA_DEVICE_MAX_CONNECTIONS is lots,"})
    void cudaSupportReachesNcclOnlyWithGdrAndEnoughHardwareQueues(String gdr, String connections, int expected,
                                                                   String warning) throws Exception {
        List<String> output = driverProps(gdr, connections);
        List<String> supports = output.stream().filter(l -> l.startsWith("ptrSupport ")).toList();
        assertEquals(List.of("ptrSupport " + expected, "ptrSupport " + expected), supports, String.join("\n", output));
        List<String> warnings = output.stream().filter(l -> l.startsWith("LOG 2 ")).toList();
        if (warning == null) {
            assertEquals(List.of(), warnings, String.join("\n", output));
        } else {
            assertEquals(1, warnings.size(), "one WARN line however often NCCL asks: " + output);
            String w = warnings.get(0);
            assertTrue(w.contains("JCCL_SHIM_GDR=1 ignored: " + warning) && w.contains(CudaClaimingNet.NAME)
                    && w.contains("set CUDA_DEVICE_MAX_CONNECTIONS=32 before the process starts"), w);
        }
    }

    private static List<String> driverProps(String gdr, String connections) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(ShimLibrary.driver().toString(), ShimLibrary.library().toString(), "props")
                .redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(k -> k.startsWith("JCCL_") || k.startsWith("NCCL_") || k.startsWith("CUDA_")
                || k.equals("JAVA_HOME") || k.equals("LD_LIBRARY_PATH"));
        env.put("JCCL_JAVA_HOME", System.getProperty("java.home"));
        env.put("JCCL_SHIM_CLASSPATH", ShimLibrary.classPath() + File.pathSeparator
                + ShimLibrary.classPath(CudaClaimingNet.class));
        env.put(ShimConfig.JCCL_SHIM_NET, CudaClaimingNet.NAME);
        if (gdr != null) {
            env.put(ShimConfig.JCCL_SHIM_GDR, gdr);
        }
        if (connections != null) {
            env.put("CUDA_DEVICE_MAX_CONNECTIONS", connections);
        }
        Process p = pb.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("the driver did not finish within 120 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("init 0"), out);
        return new ArrayList<>(out.lines().toList());
    }
}
