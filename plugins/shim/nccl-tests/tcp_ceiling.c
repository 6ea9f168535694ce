/*
 * The loopback TCP ceiling of a machine: N sender/receiver thread pairs, one TCP connection each,
 * 1 MiB writes for S seconds; prints the aggregate one-way GB/s, and the CPU time the process
 * spent (both copies, the whole TCP path through loopback) per GB moved: what any loopback
 * transport pays at the least, so a rate needs at least rate x that many cores.
 *   tcp_ceiling STREAMS SECONDS
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)

static atomic_int stop;
static atomic_long received;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static void* sender(void* arg) {
    int fd = (int) (long) arg;
    char* buf = calloc(1, CHUNK);
    while (!atomic_load(&stop)) {
        if (write(fd, buf, CHUNK) < 0) {
            break;
        }
    }
    shutdown(fd, SHUT_WR);
    free(buf);
    return NULL;
}

static void* receiver(void* arg) {
    int fd = (int) (long) arg;
    char* buf = malloc(CHUNK);
    ssize_t n;
    while ((n = read(fd, buf, CHUNK)) > 0) {
        if (!atomic_load(&stop)) {
            atomic_fetch_add(&received, n);
        }
    }
    free(buf);
    return NULL;
}

int main(int argc, char** argv) {
    int streams = argc > 1 ? atoi(argv[1]) : 1;
    double seconds = argc > 2 ? atof(argv[2]) : 3;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (bind(lfd, (struct sockaddr*) &a, sizeof a) != 0 || listen(lfd, streams) != 0
        || getsockname(lfd, (struct sockaddr*) &a, &len) != 0) {
        perror("listen");
        return 1;
    }
    pthread_t threads[2 * 256];
    int n = 0;
    for (int i = 0; i < streams && i < 256; i++) {
        int c = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(c, (struct sockaddr*) &a, sizeof a) != 0) {
            perror("connect");
            return 1;
        }
        int s = accept(lfd, NULL, NULL);
        pthread_create(&threads[n++], NULL, sender, (void*) (long) c);
        pthread_create(&threads[n++], NULL, receiver, (void*) (long) s);
    }
    usleep(200000); /* warm-up, not counted */
    atomic_store(&received, 0);
    double t0 = now(), c0 = cpu_seconds();
    usleep((useconds_t) (seconds * 1e6));
    long bytes = atomic_load(&received);
    double t1 = now(), c1 = cpu_seconds();
    atomic_store(&stop, 1);
    for (int i = 0; i < n; i++) {
        pthread_join(threads[i], NULL);
    }
    printf("loopback TCP, %d stream%s: %.2f GB/s, %.2f cores, %.0f ms of CPU per GB\n", streams,
           streams == 1 ? "" : "s", bytes / (t1 - t0) / 1e9, (c1 - c0) / (t1 - t0), (c1 - c0) / (bytes / 1e9) * 1e3);
    return 0;
}
