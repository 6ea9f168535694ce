/*
 * Finding Java: join the JVM already running in this process (a Java program that loaded the shim
 * through the native host), or start one with the JNI invocation API (NCCL in a C++ or Python
 * process), then bootstrap io.jccl.shim.ShimBridge, which fills the operation tables.
 *
 * Where the JVM comes from: JCCL_JAVA_HOME, else JAVA_HOME, else the runtime/ directory beside this
 * library (jccl package --jlink puts one there), else libjvm.so on the library path; JDK 22 or newer
 * (FFM). Its class path: JCCL_SHIM_CLASSPATH, else the jars beside this library.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <jni.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jccl_shim.h"

#define MIN_JAVA 22
#define BRIDGE_CLASS "io.jccl.shim.ShimBridge"
#define JVM_THREAD_STACK (16u << 20)

typedef jint(JNICALL* GetCreatedJavaVMs_fn)(JavaVM**, jsize, jsize*);
typedef jint(JNICALL* CreateJavaVM_fn)(JavaVM**, void**, void*);

/* ---- small string helpers ------------------------------------------------------------------ */

typedef struct {
    char* s;
    size_t len;
    size_t cap;
} strbuf;

static void sb_add(strbuf* b, const char* t) {
    size_t n = strlen(t);
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 1 > cap) {
            cap *= 2;
        }
        char* s = realloc(b->s, cap);
        if (s == NULL) {
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->len, t, n + 1);
    b->len += n;
}

static void sb_addf(strbuf* b, const char* fmt, ...) {
    char tmp[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    sb_add(b, tmp);
}

static const char* sb_str(strbuf* b) {
    return b->s ? b->s : "";
}

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

static int is_file(const char* path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* ---- which JDK ----------------------------------------------------------------------------- */

/* The feature version in HOME/release (JAVA_VERSION="25.0.1"), 0 if unknown. */
static int java_major(const char* home) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/release", home);
    FILE* f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    char line[512];
    int major = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "JAVA_VERSION=", 13) == 0) {
            const char* v = line + 13;
            if (*v == '"') {
                v++;
            }
            major = strncmp(v, "1.", 2) == 0 ? 8 : atoi(v);
            break;
        }
    }
    fclose(f);
    return major;
}

static void* open_home(const char* home, char* libjvm, size_t n) {
    snprintf(libjvm, n, "%s/lib/server/libjvm.so", home);
    if (!is_file(libjvm)) {
        return NULL;
    }
    return dlopen(libjvm, RTLD_NOW | RTLD_GLOBAL);
}

/* Opens a libjvm of JDK 22+; on failure err says what was tried and which variable to set. */
static void* locate_libjvm(char* libjvm, size_t n, char* err, size_t errlen) {
    const char* jccl_home = getenv("JCCL_JAVA_HOME");
    if (nonblank(jccl_home)) {
        int major = java_major(jccl_home);
        if (major > 0 && major < MIN_JAVA) {
            snprintf(err, errlen, "JCCL_JAVA_HOME=%s is JDK %d; set JCCL_JAVA_HOME to a JDK %d or newer", jccl_home,
                     major, MIN_JAVA);
            return NULL;
        }
        void* lib = open_home(jccl_home, libjvm, n);
        if (lib == NULL) {
            snprintf(err, errlen, "JCCL_JAVA_HOME=%s: cannot load %s (%s); set JCCL_JAVA_HOME to a JDK %d or newer",
                     jccl_home, libjvm, is_file(libjvm) ? dlerror() : "no such file", MIN_JAVA);
        }
        return lib;
    }
    strbuf notes = {0};
    sb_add(&notes, "JCCL_JAVA_HOME unset");
    const char* java_home = getenv("JAVA_HOME");
    if (nonblank(java_home)) {
        int major = java_major(java_home);
        if (major > 0 && major < MIN_JAVA) {
            sb_addf(&notes, ", JAVA_HOME=%s is JDK %d", java_home, major);
        } else {
            void* lib = open_home(java_home, libjvm, n);
            if (lib != NULL) {
                free(notes.s);
                return lib;
            }
            sb_addf(&notes, ", JAVA_HOME=%s has no usable lib/server/libjvm.so", java_home);
        }
    } else {
        sb_add(&notes, ", JAVA_HOME unset");
    }
    /* A package's own runtime: DIR/runtime beside DIR/libnccl-net-NAME.so. */
    char bundled[PATH_MAX];
    snprintf(bundled, sizeof bundled, "%s", jccl_library_path());
    char runtime[PATH_MAX];
    snprintf(runtime, sizeof runtime, "%s/runtime", dirname(bundled));
    char release[PATH_MAX + 16];
    snprintf(release, sizeof release, "%s/release", runtime);
    if (is_file(release)) {
        int major = java_major(runtime);
        if (major > 0 && major < MIN_JAVA) {
            sb_addf(&notes, ", %s is Java %d", runtime, major);
        } else {
            void* lib = open_home(runtime, libjvm, n);
            if (lib != NULL) {
                free(notes.s);
                return lib;
            }
            sb_addf(&notes, ", %s has no usable lib/server/libjvm.so", runtime);
        }
    }
    void* lib = dlopen("libjvm.so", RTLD_NOW | RTLD_GLOBAL);
    if (lib != NULL) {
        Dl_info info;
        void* sym = dlsym(lib, "JNI_CreateJavaVM");
        if (sym != NULL && dladdr(sym, &info) != 0 && info.dli_fname != NULL) {
            snprintf(libjvm, n, "%s", info.dli_fname);
            char home[PATH_MAX];
            snprintf(home, sizeof home, "%s", info.dli_fname);
            /* HOME/lib/server/libjvm.so */
            char* h = dirname(dirname(dirname(home)));
            int major = java_major(h);
            if (major == 0 || major >= MIN_JAVA) {
                free(notes.s);
                return lib;
            }
            sb_addf(&notes, ", libjvm.so on the library path is JDK %d (%s)", major, libjvm);
        }
        dlclose(lib);
    } else {
        sb_add(&notes, ", no libjvm.so on the library path");
    }
    snprintf(err, errlen, "no JDK %d or newer found (%s); set JCCL_JAVA_HOME to a JDK %d or newer", MIN_JAVA,
             sb_str(&notes), MIN_JAVA);
    free(notes.s);
    return NULL;
}

/* ---- the class path ------------------------------------------------------------------------ */

static int compare_names(const void* a, const void* b) {
    return strcmp(*(char* const*) a, *(char* const*) b);
}

/* Appends every *.jar of dir, sorted, ':'-separated. */
static void add_jars(strbuf* cp, const char* dir) {
    DIR* d = opendir(dir);
    if (d == NULL) {
        return;
    }
    char** names = NULL;
    size_t count = 0;
    size_t cap = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".jar") == 0) {
            if (count == cap) {
                cap = cap ? cap * 2 : 32;
                char** grown = realloc(names, cap * sizeof *names);
                if (grown == NULL) {
                    break;
                }
                names = grown;
            }
            names[count++] = strdup(e->d_name);
        }
    }
    closedir(d);
    qsort(names, count, sizeof *names, compare_names);
    for (size_t i = 0; i < count; i++) {
        if (cp->len > 0) {
            sb_add(cp, ":");
        }
        sb_addf(cp, "%s/%s", dir, names[i]);
        free(names[i]);
    }
    free(names);
}

/*
 * JCCL_SHIM_CLASSPATH (an entry "DIR/" followed by a star means the jars in DIR), else the jars
 * beside this library.
 */
static void build_class_path(strbuf* cp) {
    const char* configured = getenv("JCCL_SHIM_CLASSPATH");
    if (nonblank(configured)) {
        char* copy = strdup(configured);
        char* save = NULL;
        for (char* entry = strtok_r(copy, ":", &save); entry != NULL; entry = strtok_r(NULL, ":", &save)) {
            size_t len = strlen(entry);
            if (len >= 2 && strcmp(entry + len - 2, "/*") == 0) {
                entry[len - 2] = '\0';
                add_jars(cp, entry);
            } else if (len > 0) {
                if (cp->len > 0) {
                    sb_add(cp, ":");
                }
                sb_add(cp, entry);
            }
        }
        free(copy);
        return;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", jccl_library_path());
    add_jars(cp, dirname(dir));
}

/* ---- bootstrap through JNI ----------------------------------------------------------------- */

/* Describes and clears the pending exception into err. */
static void describe_exception(JNIEnv* env, const char* doing, char* err, size_t errlen) {
    jthrowable t = (*env)->ExceptionOccurred(env);
    (*env)->ExceptionClear(env);
    const char* text = "unknown exception";
    jstring s = NULL;
    if (t != NULL) {
        jclass throwable = (*env)->FindClass(env, "java/lang/Throwable");
        jmethodID toString = throwable ? (*env)->GetMethodID(env, throwable, "toString", "()Ljava/lang/String;") : NULL;
        s = toString ? (jstring) (*env)->CallObjectMethod(env, t, toString) : NULL;
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            s = NULL;
        }
    }
    const char* chars = s ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
    if (chars != NULL) {
        text = chars;
    }
    if (strstr(text, "UnsupportedClassVersionError") != NULL) {
        snprintf(err, errlen, "%s: the JVM is older than JDK %d (%s); set JCCL_JAVA_HOME to a JDK %d or newer", doing,
                 MIN_JAVA, text, MIN_JAVA);
    } else if (strstr(text, "ClassNotFoundException") != NULL || strstr(text, "NoClassDefFoundError") != NULL) {
        snprintf(err, errlen, "%s: %s; put the JCCL jars beside %s or set JCCL_SHIM_CLASSPATH", doing, text,
                 jccl_library_path());
    } else {
        snprintf(err, errlen, "%s: %s", doing, text);
    }
    if (chars != NULL) {
        (*env)->ReleaseStringUTFChars(env, s, chars);
    }
}

/* A URLClassLoader over the shim's class path, for a joined JVM whose class path lacks JCCL. */
static jobject class_path_loader(JNIEnv* env, jobject parent, const char* class_path) {
    jclass fileClass = (*env)->FindClass(env, "java/io/File");
    jclass uriClass = (*env)->FindClass(env, "java/net/URI");
    jclass urlClass = (*env)->FindClass(env, "java/net/URL");
    jclass loaderClass = (*env)->FindClass(env, "java/net/URLClassLoader");
    if (fileClass == NULL || uriClass == NULL || urlClass == NULL || loaderClass == NULL) {
        return NULL;
    }
    jmethodID newFile = (*env)->GetMethodID(env, fileClass, "<init>", "(Ljava/lang/String;)V");
    jmethodID toUri = (*env)->GetMethodID(env, fileClass, "toURI", "()Ljava/net/URI;");
    jmethodID toUrl = (*env)->GetMethodID(env, uriClass, "toURL", "()Ljava/net/URL;");
    jmethodID newLoader = (*env)->GetMethodID(env, loaderClass, "<init>", "([Ljava/net/URL;Ljava/lang/ClassLoader;)V");
    int count = 0;
    for (const char* p = class_path; *p; p++) {
        count += *p == ':';
    }
    count += *class_path != '\0';
    jobjectArray urls = (*env)->NewObjectArray(env, count, urlClass, NULL);
    char* copy = strdup(class_path);
    char* save = NULL;
    int i = 0;
    for (char* entry = strtok_r(copy, ":", &save); entry != NULL && i < count; entry = strtok_r(NULL, ":", &save)) {
        jstring path = (*env)->NewStringUTF(env, entry);
        jobject file = (*env)->NewObject(env, fileClass, newFile, path);
        jobject uri = file ? (*env)->CallObjectMethod(env, file, toUri) : NULL;
        jobject url = uri ? (*env)->CallObjectMethod(env, uri, toUrl) : NULL;
        if ((*env)->ExceptionCheck(env)) {
            free(copy);
            return NULL;
        }
        (*env)->SetObjectArrayElement(env, urls, i++, url);
    }
    free(copy);
    return (*env)->NewObject(env, loaderClass, newLoader, urls, parent);
}

/* Loads ShimBridge (system class loader, else the shim's class path) and runs bootstrap(services). */
static ncclResult_t run_bootstrap(JNIEnv* env, jccl_services* services, const char* class_path, char* err,
                                  size_t errlen) {
    if ((*env)->PushLocalFrame(env, 64) != JNI_OK) {
        describe_exception(env, "JNI PushLocalFrame", err, errlen);
        return ncclSystemError;
    }
    ncclResult_t result = ncclSystemError;
    jclass loaderClass = (*env)->FindClass(env, "java/lang/ClassLoader");
    jmethodID getSystem = (*env)->GetStaticMethodID(env, loaderClass, "getSystemClassLoader", "()Ljava/lang/ClassLoader;");
    jmethodID loadClass = (*env)->GetMethodID(env, loaderClass, "loadClass", "(Ljava/lang/String;)Ljava/lang/Class;");
    jobject system = (*env)->CallStaticObjectMethod(env, loaderClass, getSystem);
    jstring name = (*env)->NewStringUTF(env, BRIDGE_CLASS);
    jclass bridge = (jclass) (*env)->CallObjectMethod(env, system, loadClass, name);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->ExceptionClear(env);
        jobject loader = class_path_loader(env, system, class_path);
        if (loader == NULL) {
            describe_exception(env, "cannot build a class loader over the shim's class path", err, errlen);
            goto out;
        }
        bridge = (jclass) (*env)->CallObjectMethod(env, loader, loadClass, name);
        if ((*env)->ExceptionCheck(env)) {
            char doing[PATH_MAX + 128];
            snprintf(doing, sizeof doing, "cannot load %s from %s", BRIDGE_CLASS,
                     *class_path ? class_path : "(an empty class path)");
            describe_exception(env, doing, err, errlen);
            goto out;
        }
    }
    jmethodID bootstrap = (*env)->GetStaticMethodID(env, bridge, "bootstrap", "(J)Ljava/lang/String;");
    if (bootstrap == NULL) {
        describe_exception(env, BRIDGE_CLASS ".bootstrap(long) not found", err, errlen);
        goto out;
    }
    jstring problem = (jstring) (*env)->CallStaticObjectMethod(env, bridge, bootstrap, (jlong) (intptr_t) services);
    if ((*env)->ExceptionCheck(env)) {
        describe_exception(env, BRIDGE_CLASS ".bootstrap failed", err, errlen);
        goto out;
    }
    if (problem != NULL) {
        const char* chars = (*env)->GetStringUTFChars(env, problem, NULL);
        snprintf(err, errlen, "%s", chars ? chars : "bootstrap failed");
        if (chars != NULL) {
            (*env)->ReleaseStringUTFChars(env, problem, chars);
        }
        goto out;
    }
    result = ncclSuccess;
out:
    (*env)->PopLocalFrame(env, NULL);
    return result;
}

/* ---- the JVM's AOT cache (JDK 25+) --------------------------------------------------------- */

#define AOT_MIN_JAVA 25
#define AOT_DEFAULT_NAME "jccl-shim.aot"

/*
 * A JVM the shim starts meets NCCL's first messages with the data path interpreted: the cold
 * small sizes of an nccl-tests run were several times slower than warm. JDK 25's AOT cache holds
 * the classes a training run loaded and linked and the method profiles it gathered; with
 * -XX:+AOTCompileEagerly the JIT compiles the trained methods at their first call instead of after
 * thousands. JCCL_SHIM_AOT_CACHE names the cache (default: jccl-shim.aot beside this library, used
 * when it exists; "off": none); JCCL_SHIM_AOT_TRAIN=1 makes this process the training run that
 * writes it (the Java half ends the recording at the finalize of the last communicator). A cache
 * fits one JDK build and one set of jars; JDK 25 checks its own build but not the jars, which the
 * shim checks (class_path_fingerprint).
 */
#define AOT_MAX_OPTIONS 6

typedef struct {
    char path[PATH_MAX];
    char* options[AOT_MAX_OPTIONS]; /* JVM options, each its own string (paths may hold spaces) */
    int count;
    char what[PATH_MAX + 64]; /* for the INFO line: "", ", AOT cache PATH", ", training AOT cache PATH" */
} aot_setup;

static void aot_option(aot_setup* a, const char* fmt, const char* value) {
    strbuf b = {0};
    sb_add(&b, fmt);
    sb_add(&b, value);
    if (a->count < AOT_MAX_OPTIONS) {
        a->options[a->count++] = b.s;
    } else {
        free(b.s);
    }
}

static void aot_free(aot_setup* a) {
    for (int i = 0; i < a->count; i++) {
        free(a->options[i]);
    }
    a->count = 0;
}

/* A 64-bit checksum of a file's bytes, eight at a time (a multiply-xorshift mix, to tell a changed
   jar from the one a cache was trained on, not a cryptographic hash); 0 if it cannot be read. */
static unsigned long long file_hash(const char* path) {
    FILE* f = fopen(path, "rb");
    if (f == NULL) {
        return 0;
    }
    unsigned long long h = 0x243F6A8885A308D3ULL;
    unsigned char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            unsigned long long w;
            memcpy(&w, buf + i, 8);
            h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
            h ^= h >> 29;
        }
        for (; i < n; i++) {
            h = (h ^ buf[i]) * 0x100000001B3ULL;
        }
    }
    fclose(f);
    return h;
}

/*
 * The jars a cache is trained on: "name|size|hash" per class path entry (the file name, not its
 * directory, so that a package directory may move), ';'-separated. JDK 25 checks neither the size
 * nor the contents of a class path jar when it maps an AOT cache (measured: a rebuilt jar's old
 * classes still came from the cache), so the shim keeps this record beside the cache
 * (PATH.classpath, written by the training run) and starts without a cache whose jars changed.
 * Reading the jars takes about 2 ms per start (4.4 MB, the jars pack.sh packs; build machine).
 */
static void class_path_fingerprint(const char* class_path, strbuf* out) {
    char* copy = strdup(class_path);
    char* save = NULL;
    for (char* e = strtok_r(copy, ":", &save); e != NULL; e = strtok_r(NULL, ":", &save)) {
        struct stat st;
        int file = stat(e, &st) == 0 && S_ISREG(st.st_mode);
        const char* slash = strrchr(e, '/');
        sb_addf(out, "%s%s|%lld|%016llx", out->len > 0 ? ";" : "", slash ? slash + 1 : e,
                file ? (long long) st.st_size : -1LL, file ? file_hash(e) : 0ULL);
    }
    free(copy);
}

/* Whether PATH.classpath holds fingerprint exactly. */
static int trained_on(const char* path, const char* fingerprint) {
    char record[PATH_MAX + 16];
    snprintf(record, sizeof record, "%s.classpath", path);
    FILE* f = fopen(record, "r");
    if (f == NULL) {
        return 0;
    }
    strbuf got = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) {
        chunk[n] = '\0';
        sb_add(&got, chunk);
    }
    fclose(f);
    while (got.len > 0 && (got.s[got.len - 1] == '\n' || got.s[got.len - 1] == '\r')) {
        got.s[--got.len] = '\0';
    }
    int same = strcmp(sb_str(&got), fingerprint) == 0;
    free(got.s);
    return same;
}

/*
 * Takes PATH.lock for this process's life (flock: the kernel drops it when the process ends, however
 * it ends), so that one process at a time writes a cache; 0 if another holds it. A lock file that
 * cannot be made (a read-only directory) does not stop the training: its own write then fails
 * with the JVM's words.
 */
static int training_lock(const char* path) {
    char lock[PATH_MAX + 8];
    snprintf(lock, sizeof lock, "%s.lock", path);
    int fd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) {
        return 1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return 0;
    }
    return 1; /* fd stays open: the lock is held until the process exits */
}

/* Whether the user's JVM options already choose a CDS or AOT archive, which ours would contradict. */
static int user_chose_archive(const char* opts) {
    return nonblank(opts) && (strstr(opts, "-XX:AOTCache") != NULL || strstr(opts, "-XX:AOTConfiguration") != NULL
                              || strstr(opts, "-XX:SharedArchiveFile") != NULL || strstr(opts, "-Xshare:off") != NULL);
}

/* Fills a (no options where none apply); 0, or -1 with err set for a bad setting. */
static int aot_configure(aot_setup* a, int java, const char* class_path, char* err, size_t errlen) {
    memset(a, 0, sizeof *a);
    const char* cache = getenv("JCCL_SHIM_AOT_CACHE");
    const char* train = getenv("JCCL_SHIM_AOT_TRAIN");
    int training = 0;
    if (nonblank(train)) {
        if (strcmp(train, "1") == 0) {
            training = 1;
        } else if (strcmp(train, "0") != 0) {
            snprintf(err, errlen, "JCCL_SHIM_AOT_TRAIN=%s: expected 1 (this run writes the AOT cache) or 0", train);
            return -1;
        }
    }
    if (nonblank(cache) && strcmp(cache, "off") == 0) {
        if (training) {
            snprintf(err, errlen, "JCCL_SHIM_AOT_TRAIN=1 with JCCL_SHIM_AOT_CACHE=off: name the file to write");
            return -1;
        }
        return 0;
    }
    if (user_chose_archive(getenv("JCCL_SHIM_JVM_OPTS"))) {
        if (training) {
            snprintf(err, errlen, "JCCL_SHIM_AOT_TRAIN=1, but JCCL_SHIM_JVM_OPTS already names an archive; drop one");
            return -1;
        }
        return 0;
    }
    if (nonblank(cache)) {
        snprintf(a->path, sizeof a->path, "%s", cache);
    } else {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", jccl_library_path());
        snprintf(a->path, sizeof a->path, "%s/%s", dirname(dir), AOT_DEFAULT_NAME);
    }
    if (java > 0 && java < AOT_MIN_JAVA) {
        if (training || nonblank(cache)) {
            snprintf(err, errlen, "%s needs JDK %d or newer (this JVM is JDK %d); unset it or set JCCL_JAVA_HOME",
                     training ? "JCCL_SHIM_AOT_TRAIN=1" : "JCCL_SHIM_AOT_CACHE", AOT_MIN_JAVA, java);
            return -1;
        }
        return 0;
    }
    if (training && !training_lock(a->path)) {
        /* Ranks of one job share the environment: the first to start trains, the others run as usual. */
        jccl_log(NCCL_LOG_INFO, NCCL_INIT | NCCL_NET, "NET/JCCL: another process is training AOT cache %s (it holds "
                 "%s.lock): this one runs without it and without training it", a->path, a->path);
        return 0; /* nor loads the cache: the trainer is replacing it */
    }
    strbuf fingerprint = {0};
    if (training || is_file(a->path)) {
        class_path_fingerprint(class_path, &fingerprint);
    }
    if (training) {
        aot_option(a, "-XX:AOTCacheOutput=", a->path);
        aot_option(a, "-Djccl.shim.aotOutput=", a->path);
        aot_option(a, "-Djccl.shim.aotClassPath=", sb_str(&fingerprint));
        /* The JVM writing a cache warns of every class it leaves out (JFR events, proxies): hundreds of lines. */
        aot_option(a, "-Xlog:aot*=error", "");
        snprintf(a->what, sizeof a->what, ", training AOT cache %s", a->path);
    } else if (is_file(a->path)) {
        if (trained_on(a->path, sb_str(&fingerprint))) {
            aot_option(a, "-XX:AOTCache=", a->path);
            aot_option(a, "-XX:+UnlockExperimentalVMOptions", "");
            aot_option(a, "-XX:+AOTCompileEagerly", "");
            snprintf(a->what, sizeof a->what, ", AOT cache %s", a->path);
        } else {
            jccl_log(NCCL_LOG_WARN, NCCL_INIT | NCCL_NET, "NET/JCCL: AOT cache %s was not trained on these jars (%s.classpath "
                     "differs or is missing): starting without it; write it again with JCCL_SHIM_AOT_TRAIN=1", a->path,
                     a->path);
        }
    } else if (nonblank(cache)) {
        snprintf(err, errlen, "JCCL_SHIM_AOT_CACHE=%s: no such file; write it with JCCL_SHIM_AOT_TRAIN=1 "
                 "(README: the shim's AOT cache), or unset it", cache);
        free(fingerprint.s);
        return -1;
    }
    free(fingerprint.s);
    return 0;
}

/* ---- starting a JVM ------------------------------------------------------------------------ */

typedef struct {
    CreateJavaVM_fn create;
    JavaVMOption* options;
    int count;
    jccl_services* services;
    const char* class_path;
    char* err;
    size_t errlen;
    ncclResult_t result;
} start_request;

/*
 * JNI_CreateJavaVM runs on a thread of our own: the caller may be a process's primordial thread,
 * on which HotSpot cannot place its stack guard pages.
 */
static void* start_thread(void* arg) {
    start_request* r = arg;
    JavaVMInitArgs args;
    args.version = JNI_VERSION_10;
    args.nOptions = r->count;
    args.options = r->options;
    args.ignoreUnrecognized = JNI_FALSE;
    JavaVM* vm = NULL;
    JNIEnv* env = NULL;
    jint rc = r->create(&vm, (void**) &env, &args);
    if (rc != JNI_OK) {
        const char* opts = getenv("JCCL_SHIM_JVM_OPTS");
        snprintf(r->err, r->errlen, "JNI_CreateJavaVM failed (%d; the JVM printed why on stderr)%s%s", (int) rc,
                 nonblank(opts) ? "; check JCCL_SHIM_JVM_OPTS=" : "", nonblank(opts) ? opts : "");
        r->result = ncclSystemError;
        return NULL;
    }
    r->result = run_bootstrap(env, r->services, r->class_path, r->err, r->errlen);
    (*vm)->DetachCurrentThread(vm);
    return NULL;
}

static ncclResult_t start_jvm(void* libjvm, const char* libjvm_path, jccl_services* services, const char* class_path,
                              aot_setup* aot, char* err, size_t errlen) {
    CreateJavaVM_fn create = (CreateJavaVM_fn) dlsym(libjvm, "JNI_CreateJavaVM");
    if (create == NULL) {
        snprintf(err, errlen, "%s has no JNI_CreateJavaVM", libjvm_path);
        return ncclSystemError;
    }
    strbuf cp_option = {0};
    sb_add(&cp_option, "-Djava.class.path=");
    sb_add(&cp_option, class_path);
    strbuf lib_option = {0};
    sb_addf(&lib_option, "-Djccl.shim.library=%s", jccl_library_path());

    JavaVMOption options[64];
    int n = 0;
    options[n++].optionString = (char*) sb_str(&cp_option);
    options[n++].optionString = (char*) sb_str(&lib_option);
    /* FFM upcalls and downcalls from the bridge and the transports. */
    options[n++].optionString = "--enable-native-access=ALL-UNNAMED";
    /* Leave SIGINT, SIGTERM, SIGHUP and SIGQUIT to the host program (Python, a C++ trainer). */
    options[n++].optionString = "-Xrs";
    char* user = NULL;
    const char* configured = getenv("JCCL_SHIM_JVM_OPTS");
    /* A guest in someone else's process (a trainer with many cores): a fixed, small set of threads.
       The data path allocates nothing per message, so the serial collector has little to do, and
       G1 would start up to one GC thread per core as its work grows, which a destroy/re-create
       check reads as a leak. Two compiler threads, never more or fewer. A collector the user names
       replaces ours (the JVM refuses two); the user's other -XX options come later and win. */
    if (!nonblank(configured) || !(strstr(configured, "-XX:+Use") != NULL && strstr(configured, "GC") != NULL)) {
        options[n++].optionString = "-XX:+UseSerialGC";
    }
    options[n++].optionString = "-XX:CICompilerCount=2";
    options[n++].optionString = "-XX:-UseDynamicNumberOfCompilerThreads";
    /* Before the user's options, which win. */
    for (int i = 0; i < aot->count; i++) {
        options[n++].optionString = aot->options[i];
    }
    if (nonblank(configured)) {
        user = strdup(configured);
        char* save = NULL;
        for (char* o = strtok_r(user, " \t\n", &save); o != NULL && n < 64; o = strtok_r(NULL, " \t\n", &save)) {
            options[n++].optionString = o;
        }
    }
    for (int i = 0; i < n; i++) {
        options[i].extraInfo = NULL;
    }
    start_request request = {create, options, n, services, class_path, err, errlen, ncclSystemError};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, JVM_THREAD_STACK);
    pthread_t thread;
    if (pthread_create(&thread, &attr, start_thread, &request) != 0) {
        snprintf(err, errlen, "cannot create the thread that starts the JVM");
    } else {
        pthread_join(thread, NULL);
    }
    pthread_attr_destroy(&attr);
    free(user);
    free(cp_option.s);
    free(lib_option.s);
    return request.result;
}

/* ---- joining a running JVM ----------------------------------------------------------------- */

static JavaVM* running_jvm(void) {
    GetCreatedJavaVMs_fn created = (GetCreatedJavaVMs_fn) dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs");
    if (created == NULL) {
        void* lib = dlopen("libjvm.so", RTLD_LAZY | RTLD_NOLOAD);
        if (lib != NULL) {
            created = (GetCreatedJavaVMs_fn) dlsym(lib, "JNI_GetCreatedJavaVMs");
        }
    }
    if (created == NULL) {
        return NULL;
    }
    JavaVM* vm = NULL;
    jsize count = 0;
    if (created(&vm, 1, &count) != JNI_OK || count < 1) {
        return NULL;
    }
    return vm;
}

static ncclResult_t join_jvm(JavaVM* vm, jccl_services* services, const char* class_path, char* err, size_t errlen) {
    JNIEnv* env = NULL;
    int attached = 0;
    jint rc = (*vm)->GetEnv(vm, (void**) &env, JNI_VERSION_10);
    if (rc == JNI_EDETACHED) {
        JavaVMAttachArgs args = {JNI_VERSION_10, "jccl-shim-bootstrap", NULL};
        rc = (*vm)->AttachCurrentThreadAsDaemon(vm, (void**) &env, &args);
        attached = rc == JNI_OK;
    }
    if (rc != JNI_OK) {
        snprintf(err, errlen, "cannot attach to the JVM running in this process (JNI error %d)", (int) rc);
        return ncclSystemError;
    }
    ncclResult_t r = run_bootstrap(env, services, class_path, err, errlen);
    if (attached) {
        (*vm)->DetachCurrentThread(vm);
    }
    return r;
}

ncclResult_t jccl_jvm_bootstrap(jccl_services* services, char* err, size_t errlen, char* how, size_t howlen) {
    strbuf cp = {0};
    build_class_path(&cp);
    ncclResult_t r;
    JavaVM* vm = running_jvm();
    if (vm != NULL) {
        r = join_jvm(vm, services, sb_str(&cp), err, errlen);
        snprintf(how, howlen, "joined the JVM running in this process");
    } else {
        char libjvm[PATH_MAX];
        void* lib = locate_libjvm(libjvm, sizeof libjvm, err, errlen);
        if (lib == NULL) {
            r = ncclSystemError;
        } else if (cp.len == 0) {
            snprintf(err, errlen, "no jars beside %s and JCCL_SHIM_CLASSPATH unset; set JCCL_SHIM_CLASSPATH to the JCCL "
                     "jars and your transport's", jccl_library_path());
            r = ncclSystemError;
        } else {
            /* HOME/lib/server/libjvm.so */
            char home[PATH_MAX];
            snprintf(home, sizeof home, "%s", libjvm);
            aot_setup aot;
            if (aot_configure(&aot, java_major(dirname(dirname(dirname(home)))), sb_str(&cp), err, errlen) != 0) {
                r = ncclInvalidUsage;
            } else {
                r = start_jvm(lib, libjvm, services, sb_str(&cp), &aot, err, errlen);
                snprintf(how, howlen, "started %s%s", libjvm, aot.what);
            }
            aot_free(&aot);
        }
    }
    free(cp.s);
    return r;
}
