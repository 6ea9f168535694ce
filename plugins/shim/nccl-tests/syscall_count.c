/*
 * LD_PRELOAD'ed into a rank: counts and times the socket system calls the process makes (write,
 * writev, send, sendmsg, read, readv, recv, recvmsg on sockets only) and prints one line at exit.
 * Beside nccl-tests it tells how many calls a transport makes per message and what each costs,
 * for NCCL's Socket and for JcclSocket alike (Java's NIO goes through the same libc functions).
 *   gcc -O2 -shared -fPIC -o syscall_count.so syscall_count.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum { OUT, IN, KINDS };
static unsigned long calls[KINDS], empty[KINDS];
static double ns[KINDS];
static __thread int inside;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int is_socket(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static void record(int kind, double start, ssize_t result) {
    __atomic_fetch_add(&calls[kind], 1, __ATOMIC_RELAXED);
    if (result <= 0) {
        __atomic_fetch_add(&empty[kind], 1, __ATOMIC_RELAXED);
    }
    double d = now_ns() - start;
    ns[kind] += d; /* a race may lose a sample: this is a report, not an account */
}

#define WRAP(kind, name, ret, params, args)                                   \
    ret name params {                                                         \
        static ret(*real) params;                                             \
        if (!real) {                                                          \
            real = (ret(*) params) dlsym(RTLD_NEXT, #name);                   \
        }                                                                     \
        if (inside || !is_socket(fd)) {                                       \
            return real args;                                                 \
        }                                                                     \
        inside = 1;                                                           \
        double start_ = now_ns();                                             \
        ret r_ = real args;                                                   \
        record(kind, start_, r_);                                             \
        inside = 0;                                                           \
        return r_;                                                            \
    }

WRAP(OUT, write, ssize_t, (int fd, const void* b, size_t n), (fd, b, n))
WRAP(OUT, writev, ssize_t, (int fd, const struct iovec* v, int n), (fd, v, n))
WRAP(OUT, send, ssize_t, (int fd, const void* b, size_t n, int f), (fd, b, n, f))
WRAP(OUT, sendmsg, ssize_t, (int fd, const struct msghdr* m, int f), (fd, m, f))
WRAP(IN, read, ssize_t, (int fd, void* b, size_t n), (fd, b, n))
WRAP(IN, readv, ssize_t, (int fd, const struct iovec* v, int n), (fd, v, n))
WRAP(IN, recv, ssize_t, (int fd, void* b, size_t n, int f), (fd, b, n, f))
WRAP(IN, recvmsg, ssize_t, (int fd, struct msghdr* m, int f), (fd, m, f))

__attribute__((destructor)) static void report(void) {
    fprintf(stderr, "SYSCALLS pid %d: out %lu calls %.0f ns mean (%lu moved nothing); in %lu calls %.0f ns mean "
            "(%lu found nothing)\n", (int) getpid(), calls[OUT], calls[OUT] ? ns[OUT] / calls[OUT] : 0, empty[OUT],
            calls[IN], calls[IN] ? ns[IN] / calls[IN] : 0, empty[IN]);
}
