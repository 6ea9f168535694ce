/*
 * The raw-socket floor of a small all-reduce through loopback TCP: N processes (default 4), a TCP
 * connection between every pair (TCP_NODELAY), 24-byte messages (JCCL's 16-byte header and 8 bytes
 * of data), no reduction work. What `jccl perf all_reduce -b 8 -e 8 -np N` with NCCL_SHM_DISABLE=1
 * and Open MPI's `--mca btl tcp,self` pay for the syscalls and the scheduling alone.
 *
 *   gcc -O2 -o /tmp/tcp_allreduce_floor bench/mpi/tcp_allreduce_floor.c
 *   for m in doubling mesh doubling-blocking mesh-blocking; do /tmp/tcp_allreduce_floor $m 20000; done
 *
 * Modes:
 *   doubling   recursive doubling (N a power of two): in round j swap with rank ^ 2^j
 *   mesh       every rank sends to every other, then reads all N-1
 *   -blocking  wait in recv / poll instead of a non-blocking read and sched_yield after each empty one
 * Prints rank 0's mean time per call in us, after 1000 calls of warm-up.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS 64
#define MESSAGE 24
#define WARMUP 1000

static int fds[MAX_RANKS];
static int blocking;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void die(const char* what) {
    perror(what);
    exit(1);
}

static void send_all(int fd, const char* b, int n) {
    while (n > 0) {
        ssize_t w = send(fd, b, n, 0);
        if (w < 0) {
            die("send");
        }
        b += w;
        n -= (int) w;
    }
}

/* Reads n bytes; non-blocking mode yields the core after each read that finds nothing. */
static void recv_all(int fd, char* b, int n) {
    int got = 0;
    while (got < n) {
        ssize_t r = recv(fd, b + got, n - got, blocking ? 0 : MSG_DONTWAIT);
        if (r > 0) {
            got += (int) r;
        } else if (r < 0 && errno == EAGAIN) {
            sched_yield();
        } else {
            die("recv");
        }
    }
}

static void mesh(int me, int n, const char* out, char* in) {
    for (int p = 0; p < n; p++) {
        if (p != me) {
            send_all(fds[p], out, MESSAGE);
        }
    }
    int got[MAX_RANKS] = {0};
    int left = n - 1;
    while (left > 0) {
        int progressed = 0;
        for (int p = 0; p < n; p++) {
            if (p == me || got[p]) {
                continue;
            }
            ssize_t r = recv(fds[p], in, MESSAGE, MSG_DONTWAIT);
            if (r > 0) {
                if (r < MESSAGE) {
                    recv_all(fds[p], in + r, MESSAGE - (int) r);
                }
                got[p] = 1;
                left--;
                progressed = 1;
            } else if (r == 0 || (r < 0 && errno != EAGAIN)) {
                die("recv");
            }
        }
        if (progressed || left == 0) {
            continue;
        }
        if (blocking) {
            struct pollfd pf[MAX_RANKS];
            int k = 0;
            for (int p = 0; p < n; p++) {
                if (p != me && !got[p]) {
                    pf[k].fd = fds[p];
                    pf[k].events = POLLIN;
                    k++;
                }
            }
            poll(pf, k, -1);
        } else {
            sched_yield();
        }
    }
}

static void doubling(int me, int n, const char* out, char* in) {
    for (int bit = 1; bit < n; bit <<= 1) {
        int partner = me ^ bit;
        send_all(fds[partner], out, MESSAGE);
        recv_all(fds[partner], in, MESSAGE);
    }
}

static void connect_all(int me, int n, int basePort) {
    int one = 1;
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(basePort + me);
    if (bind(ls, (struct sockaddr*) &a, sizeof a) != 0 || listen(ls, MAX_RANKS) != 0) {
        die("bind");
    }
    for (int p = 0; p < me; p++) { /* connect to lower ranks, which listen already or soon */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        a.sin_port = htons(basePort + p);
        while (connect(s, (struct sockaddr*) &a, sizeof a) != 0) {
            close(s);
            usleep(1000);
            s = socket(AF_INET, SOCK_STREAM, 0);
        }
        send_all(s, (const char*) &me, sizeof me);
        fds[p] = s;
    }
    for (int k = me + 1; k < n; k++) { /* accept the higher ranks; each names itself */
        int s = accept(ls, NULL, NULL);
        int p;
        if (s < 0) {
            die("accept");
        }
        if (recv(s, &p, sizeof p, MSG_WAITALL) != (ssize_t) sizeof p || p < 0 || p >= n) {
            die("accept: the peer's rank");
        }
        fds[p] = s;
    }
    close(ls);
    for (int p = 0; p < n; p++) {
        if (p != me) {
            setsockopt(fds[p], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
    }
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s doubling|mesh[-blocking] CALLS [RANKS]\n", argv[0]);
        return 2;
    }
    int useMesh = strncmp(argv[1], "mesh", 4) == 0;
    if (!useMesh && strncmp(argv[1], "doubling", 8) != 0) {
        fprintf(stderr, "unknown mode '%s': doubling, mesh, doubling-blocking or mesh-blocking\n", argv[1]);
        return 2;
    }
    int wantBlocking = strstr(argv[1], "-blocking") != NULL;
    long calls = atol(argv[2]);
    int n = argc > 3 ? atoi(argv[3]) : 4;
    if (calls < 1 || n < 2 || n > MAX_RANKS || (!useMesh && (n & (n - 1)) != 0)) {
        fprintf(stderr, "CALLS must be positive, RANKS 2 to %d (a power of two for doubling)\n", MAX_RANKS);
        return 2;
    }
    int basePort = 20000 + (getpid() % 2000) * 16;
    for (int me = 0; me < n; me++) {
        if (fork() != 0) {
            continue;
        }
        connect_all(me, n, basePort);
        blocking = wantBlocking;
        char out[MESSAGE] = {0};
        char in[MESSAGE];
        double start = 0;
        for (long i = 0; i < calls + WARMUP; i++) {
            if (i == WARMUP) {
                start = now_ns();
            }
            if (useMesh) {
                mesh(me, n, out, in);
            } else {
                doubling(me, n, out, in);
            }
        }
        if (me == 0) {
            printf("%s, %d ranks: %.2f us per call\n", argv[1], n, (now_ns() - start) / calls / 1000);
        }
        exit(0);
    }
    int status = 0;
    for (int me = 0; me < n; me++) {
        int s;
        wait(&s);
        status |= s;
    }
    return status != 0;
}
