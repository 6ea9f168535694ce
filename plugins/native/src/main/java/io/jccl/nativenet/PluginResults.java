package io.jccl.nativenet;

import io.jccl.spi.NetException;
import io.jccl.spi.NetResult;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/** What a native plugin's return codes mean to the host, shared by the ncclNet and ncclCollNet tables. */
final class PluginResults {
    private PluginResults() {
    }

    /** @return the result a plugin's non-zero return code stands for; a code NCCL does not define is an internal error */
    static NetResult resultOf(int rc) {
        NetResult result;
        try {
            result = NetResult.fromCode(rc);
        } catch (IllegalArgumentException e) {
            return NetResult.INTERNAL_ERROR;
        }
        return result == NetResult.SUCCESS || result == NetResult.IN_PROGRESS ? NetResult.INTERNAL_ERROR : result;
    }

    static String ncclName(int rc) {
        try {
            return NetResult.fromCode(rc).ncclName();
        } catch (IllegalArgumentException e) {
            return "not an ncclResult_t";
        }
    }

    /** @throws NetException naming the plugin, the call and the code, if {@code rc} is not ncclSuccess */
    static void check(String plugin, int rc, String op) throws NetException {
        if (rc != 0) {
            throw new NetException(resultOf(rc), plugin + " " + op + " returned " + rc + " (" + ncclName(rc)
                    + "); the plugin's log says why");
        }
    }

    /** @return the error for a call that threw instead of returning (a crash the guard caught, a linkage error) */
    static NetException crashed(String plugin, String op, Throwable e) {
        return NetException.systemError("calling " + plugin + " " + op + " failed: " + e, e);
    }

    /** Calls a table's {@code devices(int*)} and returns the count. */
    static int devices(String plugin, MemorySegment fDevices) throws NetException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment n = arena.allocate(JAVA_INT);
            int rc = (int) Downcalls.I_L.invokeExact(fDevices, n.address());
            check(plugin, rc, "devices");
            return n.get(JAVA_INT, 0);
        } catch (NetException e) {
            throw e;
        } catch (Throwable e) {
            throw crashed(plugin, "devices", e);
        }
    }
}
