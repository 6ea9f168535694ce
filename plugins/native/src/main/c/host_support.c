/*
 * The few C functions the native-plugin host hands to native plugins, which Java cannot provide
 * directly: a printf-style (variadic) ncclDebugLogger_t that formats each line and passes it to
 * a Java upcall, and a profiler callback that records nothing.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

typedef void (*jccl_host_sink)(int level, unsigned long flags, const char* file, int line, const char* message);

static _Atomic(jccl_host_sink) sink;
static atomic_int max_level;

/* Where formatted lines go, and the most verbose level worth formatting (ncclDebugLogLevel). */
__attribute__((visibility("default"))) void jccl_host_set_log_sink(jccl_host_sink s, int level) {
    atomic_store(&max_level, level);
    atomic_store(&sink, s);
}

/* An ncclDebugLogger_t. */
__attribute__((visibility("default"))) void jccl_host_logger(int level, unsigned long flags, const char* file,
                                                             int line, const char* fmt, ...) {
    jccl_host_sink s = atomic_load(&sink);
    if (s == NULL || level <= 0 || level > atomic_load(&max_level) || fmt == NULL) {
        return;
    }
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    s(level, flags, file ? file : "", line, buf);
}

/* An ncclProfilerCallback_t for hosts without a profiler: no event handle, success. */
__attribute__((visibility("default"))) int jccl_host_profiler(void** eHandle, int type, void* pHandle,
                                                              int64_t pluginId, void* extData) {
    (void) type;
    (void) pHandle;
    (void) pluginId;
    (void) extData;
    if (eHandle != NULL) {
        *eHandle = NULL;
    }
    return 0;
}
