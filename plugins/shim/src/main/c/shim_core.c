/*
 * What every exported version shares: the names NCCL sees, the version limit, logging through
 * NCCL's logger, and making the Java half ready once per process.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jccl_shim.h"

jccl_net_ops jccl_net;
jccl_collnet_ops jccl_collnet;
char jccl_net_name[128];
char jccl_collnet_name[128];

/* The collnet name NCCL sees when no Java CollNet transport is configured (then it reports 0 devices). */
#define NO_COLLNET_NAME "JCCL (no CollNet transport)"
#define DEFAULT_NET "JcclSocket"

static int nonblank(const char* s) {
    if (s == NULL) {
        return 0;
    }
    for (; *s; s++) {
        if (!isspace((unsigned char) *s)) {
            return 1;
        }
    }
    return 0;
}

static void copy_trimmed(char* dst, size_t n, const char* src) {
    while (isspace((unsigned char) *src)) {
        src++;
    }
    size_t len = strlen(src);
    while (len > 0 && isspace((unsigned char) src[len - 1])) {
        len--;
    }
    if (len >= n) {
        len = n - 1;
    }
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/*
 * The package file: `jccl package` writes LIB.properties beside LIB.so (libnccl-net-NAME.properties),
 * KEY=VALUE lines ('#' starts a comment) that give the shim's settings a default for this copy of
 * the library. Only JCCL_SHIM_NET is read from it, and only where the environment leaves it open.
 * Returns 1 and the trimmed value if the file has the key.
 */
static int package_setting(const char* key, char* value, size_t n) {
    const char* lib = jccl_library_path();
    size_t len = strlen(lib);
    if (len < 4 || strcmp(lib + len - 3, ".so") != 0) {
        return 0;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%.*s.properties", (int) (len - 3), lib);
    FILE* f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    char line[512];
    size_t keylen = strlen(key);
    int found = 0;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        const char* l = line;
        while (isspace((unsigned char) *l)) {
            l++;
        }
        if (strncmp(l, key, keylen) == 0) {
            const char* rest = l + keylen;
            while (*rest == ' ' || *rest == '\t') {
                rest++;
            }
            if (*rest == '=' && nonblank(rest + 1)) {
                copy_trimmed(value, n, rest + 1);
                found = 1;
            }
        }
    }
    fclose(f);
    return found;
}

/*
 * NCCL compares ncclNet_t.name with NCCL_NET before it calls init, so the name is fixed when the
 * library loads: JCCL_SHIM_NET, else NCCL_NET unless it names one of NCCL's internal networks, else
 * JCCL_SHIM_NET of the package file beside the library (package_setting), else JcclSocket.
 */
__attribute__((constructor)) static void jccl_shim_loaded(void) {
    const char* name = getenv("JCCL_SHIM_NET");
    char packaged[128];
    if (!nonblank(name)) {
        const char* nccl = getenv("NCCL_NET");
        char trimmed[128] = "";
        if (nonblank(nccl)) {
            copy_trimmed(trimmed, sizeof trimmed, nccl);
        }
        if (nonblank(nccl) && strcasecmp(trimmed, "IB") != 0 && strcasecmp(trimmed, "Socket") != 0) {
            name = nccl;
        } else if (package_setting("JCCL_SHIM_NET", packaged, sizeof packaged)) {
            name = packaged;
        } else {
            name = DEFAULT_NET;
        }
    }
    copy_trimmed(jccl_net_name, sizeof jccl_net_name, name);
    const char* coll = getenv("JCCL_SHIM_COLLNET");
    copy_trimmed(jccl_collnet_name, sizeof jccl_collnet_name, nonblank(coll) ? coll : NO_COLLNET_NAME);
}

/* ---- the version limit --------------------------------------------------------------------- */

static int max_api_version(int* invalid) {
    const char* v = getenv("JCCL_SHIM_MAX_API_VERSION");
    *invalid = 0;
    if (!nonblank(v)) {
        return JCCL_MAX_API;
    }
    char* end;
    long n = strtol(v, &end, 10);
    while (isspace((unsigned char) *end)) {
        end++;
    }
    if (*end != '\0' || n < JCCL_MIN_API || n > JCCL_MAX_API) {
        *invalid = 1;
        return JCCL_MAX_API;
    }
    return (int) n;
}

/* Called by the ifunc resolvers of the exported symbols, i.e. at NCCL's dlsym. */
int jccl_exported(int version) {
    int invalid;
    return version <= max_api_version(&invalid);
}

/* ---- logging ------------------------------------------------------------------------------- */

static _Atomic(ncclDebugLogger_t) nccl_logger;

void jccl_set_logger(ncclDebugLogger_t logger) {
    if (logger != NULL) {
        atomic_store(&nccl_logger, logger);
    }
}

static void log_message(int level, unsigned long flags, const char* message) {
    ncclDebugLogger_t logger = atomic_load(&nccl_logger);
    if (logger != NULL) {
        logger(level, flags, "jccl", 0, "%s", message);
    } else if (level == NCCL_LOG_WARN) {
        fprintf(stderr, "JCCL WARN %s\n", message);
    }
}

void jccl_log(int level, unsigned long flags, const char* fmt, ...) {
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    log_message(level, flags, buf);
}

/* The Java half logs through here (ShimLogger), one finished line at a time. */
static void java_log(int32_t level, uint64_t flags, const char* message) {
    log_message(level, (unsigned long) flags, message);
}

/* ---- the Java half ------------------------------------------------------------------------- */

static char library_path[PATH_MAX];
static pthread_once_t library_path_once = PTHREAD_ONCE_INIT;

static void find_library_path(void) {
    Dl_info info;
    if (dladdr((void*) &jccl_library_path, &info) != 0 && info.dli_fname != NULL) {
        if (realpath(info.dli_fname, library_path) == NULL) {
            copy_trimmed(library_path, sizeof library_path, info.dli_fname);
        }
    }
}

const char* jccl_library_path(void) {
    pthread_once(&library_path_once, find_library_path);
    return library_path;
}

static pthread_mutex_t java_lock = PTHREAD_MUTEX_INITIALIZER;
static int java_state; /* 0 not tried, 1 ready, -1 failed */
static ncclResult_t java_failure_code;
static char java_failure[2048];
static jccl_services services;

ncclResult_t jccl_java_ready(const char* what, int apiVersion) {
    int invalid;
    int max = max_api_version(&invalid);
    if (invalid) {
        jccl_log(NCCL_LOG_WARN, NCCL_ALL, "NET/JCCL: JCCL_SHIM_MAX_API_VERSION=%s is not a version from %d to %d; "
                 "exporting up to v%d", getenv("JCCL_SHIM_MAX_API_VERSION"), JCCL_MIN_API, JCCL_MAX_API, max);
    }
    pthread_mutex_lock(&java_lock);
    if (java_state == 0) {
        services.abiVersion = JCCL_SHIM_ABI;
        services.netOpCount = (int32_t) JCCL_NET_OPS;
        services.collNetOpCount = (int32_t) JCCL_COLLNET_OPS;
        services.maxApiVersion = max;
        services.netName = jccl_net_name;
        services.collNetName = strcmp(jccl_collnet_name, NO_COLLNET_NAME) == 0 ? "" : jccl_collnet_name;
        services.libraryPath = jccl_library_path();
        services.log = java_log;
        services.netOps = &jccl_net;
        services.collNetOps = &jccl_collnet;
        char how[512];
        how[0] = '\0';
        java_failure_code = jccl_jvm_bootstrap(&services, java_failure, sizeof java_failure, how, sizeof how);
        java_state = java_failure_code == ncclSuccess ? 1 : -1;
        if (java_state == 1) {
            jccl_log(NCCL_LOG_INFO, NCCL_INIT | NCCL_NET, "NET/JCCL: %s ready in Java (%s); NCCL uses ncclNet/ncclCollNet v%d of %s",
                     jccl_net_name, how, apiVersion, services.libraryPath);
        }
    }
    int state = java_state;
    pthread_mutex_unlock(&java_lock);
    if (state < 0) {
        jccl_log(NCCL_LOG_WARN, NCCL_ALL, "NET/JCCL: %s: cannot run the Java transport %s: %s", what, jccl_net_name,
                 java_failure);
        return java_failure_code;
    }
    return ncclSuccess;
}
