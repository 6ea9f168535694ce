/*
 * What one small message costs the kernel on this machine: over a loopback TCP connection with
 * TCP_NODELAY, the mean time of a 16-byte write(), of the non-blocking read() that takes it on the
 * other end, and of a read() that finds nothing (EAGAIN). These are the floor under any socket
 * transport's 8-byte latency: NCCL's proxy thread makes such calls for every message.
 *   tcp_small_write [ROUNDS]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char** argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 200000;
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(listener, (struct sockaddr*) &addr, sizeof addr) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, (struct sockaddr*) &addr, &len) != 0) {
        perror("listen");
        return 1;
    }
    int sender = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(sender, (struct sockaddr*) &addr, sizeof addr) != 0) {
        perror("connect");
        return 1;
    }
    int receiver = accept(listener, NULL, NULL);
    int one = 1;
    setsockopt(sender, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(receiver, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(receiver, F_SETFL, O_NONBLOCK);
    char buf[64] = {0};
    double writing = 0, reading = 0, empty = 0;
    for (long i = 0; i < rounds; i++) {
        double t0 = now_ns();
        if (write(sender, buf, 16) != 16) {
            perror("write");
            return 1;
        }
        double t1 = now_ns();
        for (int got = 0; got < 16;) {
            ssize_t n = read(receiver, buf, sizeof buf);
            if (n > 0) {
                got += (int) n;
            } else if (n < 0 && errno != EAGAIN) {
                perror("read");
                return 1;
            }
        }
        double t2 = now_ns();
        if (read(receiver, buf, sizeof buf) >= 0 || errno != EAGAIN) {
            fprintf(stderr, "expected EAGAIN\n");
            return 1;
        }
        empty += now_ns() - t2;
        writing += t1 - t0;
        reading += t2 - t1;
    }
    printf("loopback TCP, 16-byte message: write %.0f ns, read %.0f ns, empty read %.0f ns (mean of %ld)\n",
           writing / rounds, reading / rounds, empty / rounds, rounds);
    return 0;
}
