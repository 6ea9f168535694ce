/*
 * How a reader that waits for a chunk's bytes slows or spares the writer: one loopback TCP
 * connection, a writer thread sending 512 KiB chunks back to back, and the main thread reading
 * each chunk whole in one of three ways:
 *   0  poll with non-blocking reads (what JcclSocket's receiving I/O threads did),
 *   1  sleep in poll() with SO_RCVLOWAT set to the rest of the chunk (JCCL_SOCKET_LOW_WATER=1),
 *   2  sleep in poll() without a low-water mark (woken at each segment).
 * Prints GB/s and socket reads per chunk (and how many found nothing).
 *   low_water_reader MODE [CHUNKS]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (512 * 1024)

static int writer_fd;
static long chunks = 4000;

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void* write_chunks(void* unused) {
    (void) unused;
    char* buf = malloc(CHUNK);
    memset(buf, 1, CHUNK);
    for (long c = 0; c < chunks; c++) {
        for (long done = 0; done < CHUNK;) {
            ssize_t n = send(writer_fd, buf + done, CHUNK - done, 0);
            if (n <= 0) {
                perror("send");
                exit(1);
            }
            done += n;
        }
    }
    free(buf);
    return NULL;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODE(0 poll reads, 1 SO_RCVLOWAT, 2 poll()) [CHUNKS]\n", argv[0]);
        return 2;
    }
    int mode = atoi(argv[1]);
    if (argc > 2) {
        chunks = atol(argv[2]);
    }
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(listener, (struct sockaddr*) &addr, sizeof addr) != 0 || listen(listener, 1) != 0
        || getsockname(listener, (struct sockaddr*) &addr, &len) != 0) {
        perror("listen");
        return 1;
    }
    writer_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(writer_fd, (struct sockaddr*) &addr, sizeof addr) != 0) {
        perror("connect");
        return 1;
    }
    int reader_fd = accept(listener, NULL, NULL);
    int one = 1;
    setsockopt(writer_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char* buf = malloc(CHUNK);
    long reads = 0, empty = 0;
    pthread_t writer;
    double start = seconds();
    pthread_create(&writer, NULL, write_chunks, NULL);
    for (long c = 0; c < chunks; c++) {
        for (long done = 0; done < CHUNK;) {
            if (mode == 1) {
                int rest = CHUNK - done;
                setsockopt(reader_fd, SOL_SOCKET, SO_RCVLOWAT, &rest, sizeof rest);
            }
            if (mode != 0) {
                struct pollfd p = {reader_fd, POLLIN, 0};
                poll(&p, 1, 1000);
            }
            ssize_t n = recv(reader_fd, buf + done, CHUNK - done, MSG_DONTWAIT);
            reads++;
            if (n < 0 && errno == EAGAIN) {
                empty++;
                continue;
            }
            if (n <= 0) {
                perror("recv");
                return 1;
            }
            done += n;
        }
    }
    pthread_join(writer, NULL);
    double s = seconds() - start;
    printf("%s: %.2f GB/s, %.2f reads a chunk (%.2f found nothing)\n",
           mode == 0 ? "polling reads" : mode == 1 ? "poll() with SO_RCVLOWAT" : "poll()",
           chunks * (double) CHUNK / s / 1e9, (double) reads / chunks, (double) empty / chunks);
    return 0;
}
