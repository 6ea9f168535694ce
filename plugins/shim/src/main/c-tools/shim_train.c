/*
 * jccl-shim-train: writes the AOT cache of the JVM that a JCCL shim library starts (JDK 25+), so
 * that NCCL's first messages meet compiled code (README: the shim's AOT cache).
 *
 *   jccl-shim-train LIBRARY [ROUNDS]
 *
 * Loads LIBRARY (a libnccl-net.so of JCCL, or a package's libnccl-net-NAME.so) as NCCL 2.28+ does,
 * with JCCL_SHIM_AOT_TRAIN=1: the shim starts its JVM recording, and runs its own warm-up, ROUNDS
 * (default 200000) loopback rounds of its data path, on its thread. When the warm-up has ended this
 * program finalizes the communicator's context, as NCCL's last ncclCommDestroy does, and the shim
 * has the JVM write the cache (JCCL_SHIM_AOT_CACHE, default jccl-shim.aot beside LIBRARY) and the
 * record of its jars. Exit status 0 once the shim said it wrote the cache, 1 otherwise, 2 for bad
 * arguments. Everything the shim logs is printed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ncclnet.h"

#define WARMUP_BOUND_S 120

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int warmup_ended;
static int cache_written;

/* NCCL's logger: prints each line, and notes the two the training waits for. */
static void logger(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
    (void) flags;
    (void) file;
    (void) line;
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    printf("%s %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", buf);
    fflush(stdout);
    pthread_mutex_lock(&lock);
    /* ShimWarmup's closing line: "NET/JCCL: warm-up: N of M loopback rounds in T ms..." */
    if (strstr(buf, "NET/JCCL: warm-up: ") != NULL && strstr(buf, " loopback rounds in ") != NULL) {
        warmup_ended = 1;
    }
    if (strstr(buf, "NET/JCCL: AOT cache written: ") != NULL) {
        cache_written = 1;
    }
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s LIBRARY [ROUNDS]\n", argv[0]);
        return 2;
    }
    long rounds = 200000;
    if (argc == 3) {
        char* end = NULL;
        rounds = strtol(argv[2], &end, 10);
        if (end == argv[2] || *end != '\0' || rounds < 1) {
            fprintf(stderr, "%s: ROUNDS=%s is not a number of rounds (1 or more)\n", argv[0], argv[2]);
            return 2;
        }
    }
    char count[32];
    snprintf(count, sizeof count, "%ld", rounds);
    setenv("JCCL_SHIM_AOT_TRAIN", "1", 1);
    setenv("JCCL_SHIM_WARMUP", count, 1);
    if (getenv("NCCL_DEBUG") == NULL) {
        setenv("NCCL_DEBUG", "INFO", 1);
    }
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "%s: cannot load %s: %s\n", argv[0], argv[1], dlerror());
        return 2;
    }
    /* v11 and v12 share the function table; both have the per-communicator contexts whose last
       finalize ends the recording (v6 to v10 have none). */
    ncclNet_v11_t* net = dlsym(lib, "ncclNetPlugin_v12");
    if (net == NULL) {
        net = dlsym(lib, "ncclNetPlugin_v11");
    }
    if (net == NULL) {
        fprintf(stderr, "%s: %s exports no ncclNetPlugin_v12 or _v11 (is it a JCCL shim, with "
                "JCCL_SHIM_MAX_API_VERSION unset or 11 and up?)\n", argv[0], argv[1]);
        return 2;
    }
    ncclNetCommConfig_v10_t config = {-1};
    void* ctx = NULL;
    ncclResult_t r = net->init(&ctx, 1, &config, logger, NULL);
    if (r != ncclSuccess) {
        fprintf(stderr, "%s: the shim's init failed (%d); its WARN line above says why\n", argv[0], (int) r);
        return 1;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += WARMUP_BOUND_S;
    pthread_mutex_lock(&lock);
    int timed_out = 0;
    while (!warmup_ended && !timed_out) {
        timed_out = pthread_cond_timedwait(&changed, &lock, &deadline) != 0;
    }
    pthread_mutex_unlock(&lock);
    if (timed_out) {
        fprintf(stderr, "%s: the shim's warm-up did not end within %d s; finalizing anyway\n", argv[0], WARMUP_BOUND_S);
    }
    r = net->finalize(ctx);
    pthread_mutex_lock(&lock);
    int written = cache_written;
    pthread_mutex_unlock(&lock);
    if (r != ncclSuccess || !written) {
        fprintf(stderr, "%s: no AOT cache written (finalize %d); the lines above say why\n", argv[0], (int) r);
        return 1;
    }
    return 0;
}
