/*
 * Whether a sender that does not copy is faster through loopback TCP: one connection, a writer
 * thread sending 512 KiB chunks back to back, the main thread reading them. The writer either
 *   0  send()s each chunk (what JcclSocket does), or
 *   1  vmsplice()s it into a pipe (1 MiB) and splice()s the pipe into the socket, so that the
 *      socket takes references to the writer's pages instead of a copy.
 * Prints GB/s and each side's CPU time per chunk (RUSAGE_THREAD). On the 2-core build machine
 * (nineteenth session) splicing was slower: 1.37 to 1.68 GB/s against 2.87 to 3.60, the writer
 * spending 301 to 369 us of CPU a chunk against 141 to 180 (the reader 113 to 115 against 59 to 72).
 *   gcc -O2 -o /tmp/splice_send splice_send.c -lpthread && /tmp/splice_send MODE [CHUNKS]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (512 << 10)

static int mode;
static int chunks = 4000;
static int sendFd;
static double senderCpu;

static void fail(const char* what) {
    perror(what);
    exit(1);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* CPU time of the calling thread, user and system */
static double thread_cpu(void) {
    struct rusage u;
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

static void send_chunk(const char* buf) {
    for (size_t off = 0; off < CHUNK;) {
        ssize_t n = send(sendFd, buf + off, CHUNK - off, 0);
        if (n < 0) {
            fail("send");
        }
        off += n;
    }
}

/* The pipe's pages reference buf's (vmsplice), and splice hands them to the socket. */
static void splice_chunk(const char* buf, const int pipe[2]) {
    for (size_t off = 0; off < CHUNK;) {
        struct iovec v = {(void*) (buf + off), CHUNK - off};
        ssize_t n = vmsplice(pipe[1], &v, 1, 0);
        if (n < 0) {
            fail("vmsplice");
        }
        for (ssize_t moved = 0; moved < n;) {
            ssize_t k = splice(pipe[0], NULL, sendFd, NULL, n - moved, SPLICE_F_MOVE | SPLICE_F_MORE);
            if (k < 0) {
                fail("splice");
            }
            moved += k;
        }
        off += n;
    }
}

static void* sender(void* arg) {
    (void) arg;
    char* buf = aligned_alloc(4096, CHUNK);
    memset(buf, 1, CHUNK);
    int p[2];
    if (pipe(p) != 0 || fcntl(p[1], F_SETPIPE_SZ, 1 << 20) < 0) {
        fail("pipe");
    }
    double c0 = thread_cpu();
    for (int i = 0; i < chunks; i++) {
        if (mode == 0) {
            send_chunk(buf);
        } else {
            splice_chunk(buf, p);
        }
    }
    senderCpu = thread_cpu() - c0;
    return NULL;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s 0|1 [CHUNKS]   (0: send, 1: vmsplice + splice)\n", argv[0]);
        return 2;
    }
    mode = atoi(argv[1]);
    if (argc > 2) {
        chunks = atoi(argv[2]);
    }
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (bind(listener, (struct sockaddr*) &a, sizeof a) != 0 || listen(listener, 1) != 0
        || getsockname(listener, (struct sockaddr*) &a, &len) != 0) {
        fail("listen");
    }
    sendFd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(sendFd, (struct sockaddr*) &a, sizeof a) != 0) {
        fail("connect");
    }
    int recvFd = accept(listener, NULL, NULL);
    if (recvFd < 0) {
        fail("accept");
    }
    char* rbuf = aligned_alloc(4096, CHUNK);
    pthread_t t;
    double t0 = now();
    pthread_create(&t, NULL, sender, NULL);
    double c0 = thread_cpu();
    long total = (long) chunks * CHUNK;
    for (long got = 0; got < total;) {
        ssize_t n = recv(recvFd, rbuf + (got % CHUNK), CHUNK - (got % CHUNK), 0);
        if (n <= 0) {
            fail("recv");
        }
        got += n;
    }
    double receiverCpu = thread_cpu() - c0;
    pthread_join(t, NULL);
    double elapsed = now() - t0;
    printf("%s: %.2f GB/s, sender CPU %.1f us/chunk, receiver CPU %.1f us/chunk\n", mode ? "vmsplice+splice" : "send",
           total / elapsed / 1e9, senderCpu / chunks * 1e6, receiverCpu / chunks * 1e6);
    return 0;
}
