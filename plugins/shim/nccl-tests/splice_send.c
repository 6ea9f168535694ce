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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#define CHUNK (512 << 10)
static int mode, chunks = 4000, rfd, sfd;
static double now() { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static double cpu() { struct rusage u; getrusage(RUSAGE_THREAD, &u); return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6; }
static double sendCpu;
static void* sender(void* a) {
  char* buf = aligned_alloc(4096, CHUNK); memset(buf, 1, CHUNK);
  int p[2]; pipe(p); fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
  double c0 = cpu();
  for (int i = 0; i < chunks; i++) {
    if (mode == 0) {
      size_t off = 0; while (off < CHUNK) { ssize_t n = send(sfd, buf + off, CHUNK - off, 0); if (n < 0) { perror("send"); exit(1); } off += n; }
    } else {
      size_t off = 0;
      while (off < CHUNK) {
        struct iovec v = { buf + off, CHUNK - off };
        ssize_t n = vmsplice(p[1], &v, 1, 0); if (n < 0) { perror("vmsplice"); exit(1); }
        ssize_t m = 0; while (m < n) { ssize_t k = splice(p[0], NULL, sfd, NULL, n - m, SPLICE_F_MOVE | SPLICE_F_MORE); if (k < 0) { perror("splice"); exit(1); } m += k; }
        off += n;
      }
    }
  }
  sendCpu = cpu() - c0;
  return NULL;
}
int main(int argc, char** argv) {
  mode = atoi(argv[1]); if (argc > 2) chunks = atoi(argv[2]);
  int l = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_addr.s_addr = htonl(0x7f000001);
  bind(l, (void*)&a, sizeof a); listen(l, 1); socklen_t len = sizeof a; getsockname(l, (void*)&a, &len);
  sfd = socket(AF_INET, SOCK_STREAM, 0); connect(sfd, (void*)&a, sizeof a); rfd = accept(l, 0, 0);
  char* rbuf = aligned_alloc(4096, CHUNK);
  pthread_t t; double t0 = now(); pthread_create(&t, NULL, sender, NULL);
  double c0 = cpu(); long total = (long) chunks * CHUNK, got = 0;
  while (got < total) { ssize_t n = recv(rfd, rbuf + (got % CHUNK), CHUNK - (got % CHUNK), 0); if (n <= 0) { perror("recv"); exit(1); } got += n; }
  double rc = cpu() - c0; pthread_join(t, NULL); double el = now() - t0;
  printf("%s: %.2f GB/s, sender CPU %.1f us/chunk, receiver CPU %.1f us/chunk\n", mode ? "vmsplice+splice" : "send", total / el / 1e9, sendCpu / chunks * 1e6, rc / chunks * 1e6);
  return 0;
}
