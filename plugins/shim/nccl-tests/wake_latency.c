// How long a parked thread takes to run once another thread wakes it, on this machine: the cost
// every I/O thread pays when a message comes after it went to sleep (JcclSocket's StreamWorker,
// NCCL's socket helper threads). The waker sleeps between rounds, so the sleeper's core goes idle
// as it does between the messages of a collective; a second series has the waker's core busy
// (spinning) instead, as NCCL's proxy thread is, and a third has it yield right after the wake.
//   gcc -O2 -pthread -o wake_latency wake_latency.c && ./wake_latency [rounds]
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long posted, seen;
static struct timespec woke_at;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void *sleeper(void *arg) {
    (void) arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (seen == posted) pthread_cond_wait(&cond, &lock);
        clock_gettime(CLOCK_MONOTONIC, &woke_at);
        seen = posted;
        pthread_mutex_unlock(&lock);
        if (seen < 0) return NULL;
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void series(const char *name, int rounds, int spin, int yield) {
    double *d = malloc(sizeof(double) * rounds);
    for (int i = 0; i < rounds; i++) {
        double until = now_us() + 500;  // the sleeper is parked (and its core idle) by then
        if (spin) { while (now_us() < until) { } } else { struct timespec s = {0, 500000}; nanosleep(&s, NULL); }
        pthread_mutex_lock(&lock);
        double t0 = now_us();
        posted++;
        pthread_cond_signal(&cond);
        pthread_mutex_unlock(&lock);
        if (yield) sched_yield();
        for (;;) {  // wait for the sleeper to record its wake-up
            pthread_mutex_lock(&lock);
            int done = seen == posted;
            double t1 = woke_at.tv_sec * 1e6 + woke_at.tv_nsec / 1e3;
            pthread_mutex_unlock(&lock);
            if (done) { d[i] = t1 - t0; break; }
        }
    }
    qsort(d, rounds, sizeof(double), cmp);
    double sum = 0;
    for (int i = 0; i < rounds; i++) sum += d[i];
    printf("thread wake-up, waker %s: median %.1f us, mean %.1f, p90 %.1f, p99 %.1f (%d rounds)\n", name,
           d[rounds / 2], sum / rounds, d[rounds * 9 / 10], d[rounds * 99 / 100], rounds);
    free(d);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 2000;
    pthread_t t;
    pthread_create(&t, NULL, sleeper, NULL);
    series("sleeping between rounds", rounds, 0, 0);
    series("spinning between rounds", rounds, 1, 0);
    series("spinning, yielding after the wake", rounds, 1, 1);
    pthread_mutex_lock(&lock);
    posted = -1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    return 0;
}
