// The floor of a 2-rank shared-memory ring all-reduce on this machine, and what the copy
// instruction does to it: two processes, 1 MiB of floats each, the ring JCCL runs (copy a half
// into the peer's slot, reduce the other half with what the peer sent, copy the result into the
// slot, copy the peer's result out), with three ways to copy:
//   0  the C library's memcpy (glibc: rep movsb at these sizes)
//   1  a loop of 32-byte vector loads and stores, as the JIT's copy stub does
//   2  rep movsb written out
//   gcc -O3 -march=native -o ring_copy ring_copy.c && for m in 0 1 2; do ./ring_copy $m; done
#define _GNU_SOURCE
#include <immintrin.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLOATS (1 << 18) /* 1 MiB */
#define BYTES (FLOATS * 4L)
#define WARMUP 300

typedef struct {
    _Atomic long posted[2][16]; /* [rank][phase * 8]: one cache line per counter */
} flags_t;

static int mode;

static void copy_vector_loop(void *d, const void *s, size_t n) {
    char *dd = d;
    const char *ss = s;
    for (size_t i = 0; i < n; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(ss + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(ss + i + 32));
        _mm256_storeu_si256((__m256i *)(dd + i), a);
        _mm256_storeu_si256((__m256i *)(dd + i + 32), b);
    }
}

static void copy_rep_movsb(void *d, const void *s, size_t n) {
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

static void copy(void *d, const void *s, size_t n) {
    if (mode == 1) copy_vector_loop(d, s, n);
    else if (mode == 2) copy_rep_movsb(d, s, n);
    else memcpy(d, s, n);
}

static void add(float *restrict o, const float *restrict a, const float *restrict b, long n) {
    for (long i = 0; i < n; i++) o[i] = a[i] + b[i];
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void post(flags_t *f, int me, int phase, long v) {
    atomic_store_explicit(&f->posted[me][phase * 8], v, memory_order_release);
}

static void await(flags_t *f, int who, int phase, long v) {
    while (atomic_load_explicit(&f->posted[who][phase * 8], memory_order_acquire) < v) __builtin_ia32_pause();
}

int main(int argc, char **argv) {
    mode = argc > 1 ? atoi(argv[1]) : 0;
    int iters = argc > 2 ? atoi(argv[2]) : 3000;
    char *shm = mmap(0, 4096 + 4 * BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED) { perror("mmap"); return 1; }
    flags_t *f = (flags_t *)shm;
    /* slot[parity][rank]: what rank writes for its peer, double-buffered by the call's parity */
    float *slot[2][2];
    for (int p = 0; p < 2; p++)
        for (int r = 0; r < 2; r++) slot[p][r] = (float *)(shm + 4096 + (p * 2 + r) * BYTES);
    int me = fork() == 0 ? 1 : 0, peer = 1 - me;
    float *in = aligned_alloc(64, BYTES), *out = aligned_alloc(64, BYTES);
    for (long i = 0; i < FLOATS; i++) { in[i] = me + 1; out[i] = 0; }
    long half = FLOATS / 2;
    double t0 = 0;
    for (int it = 0; it < iters + WARMUP; it++) {
        if (it == WARMUP) { post(f, me, 2, 1); await(f, peer, 2, 1); t0 = now(); }
        long seq = it + 1;
        int p = it & 1;
        copy(slot[p][me], in + peer * half, BYTES / 2);                 /* the peer's half, to reduce there */
        post(f, me, 0, seq); await(f, peer, 0, seq);
        add(out + me * half, in + me * half, slot[p][peer], half);      /* my half, final */
        copy(slot[p][me] + half, out + me * half, BYTES / 2);           /* to the peer */
        post(f, me, 1, seq); await(f, peer, 1, seq);
        copy(out + peer * half, slot[p][peer] + half, BYTES / 2);       /* the peer's final half */
    }
    double t = (now() - t0) / iters;
    int wrong = 0;
    for (long i = 0; i < FLOATS; i++) wrong |= out[i] != 3;
    if (me == 0) {
        wait(0);
        printf("copy %s: %.1f us per 1 MiB all-reduce, busbw %.2f GB/s%s\n",
               mode == 1 ? "32-byte vector loop" : mode == 2 ? "rep movsb" : "memcpy", t * 1e6, BYTES / t / 1e9,
               wrong ? " WRONG" : "");
    }
    return wrong;
}
