/*
 * MPI_Allreduce baseline for `jccl perf all_reduce`: the same sizes, the same timing method and the
 * same nccl-tests formulas (algbw = bytes / time, busbw = algbw * 2(n-1)/n), float sum,
 * out-of-place. Build and run with run-baseline.sh.
 *
 * usage: allreduce_baseline [-b minbytes] [-e maxbytes] [-f factor] [-n iters] [-w warmup]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    switch (*end) {
        case 'K': case 'k': v *= 1024.0; break;
        case 'M': case 'm': v *= 1024.0 * 1024.0; break;
        case 'G': case 'g': v *= 1024.0 * 1024.0 * 1024.0; break;
        default: break;
    }
    return (size_t) v;
}

int main(int argc, char **argv) {
    size_t min_bytes = 8, max_bytes = 64u << 20;
    int factor = 2, iters = 20, warmup = 5;
    MPI_Init(&argc, &argv);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-b")) min_bytes = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "-e")) max_bytes = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "-f")) factor = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-n")) iters = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-w")) warmup = atoi(argv[i + 1]);
    }
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    size_t max_count = max_bytes / sizeof(float);
    float *send = malloc((max_count ? max_count : 1) * sizeof(float));
    float *recv = malloc((max_count ? max_count : 1) * sizeof(float));
    for (size_t i = 0; i < max_count; i++) send[i] = (float) ((rank + i) % 8);
    if (rank == 0) {
        printf("# MPI_Allreduce baseline, %d ranks, float sum, out-of-place\n", n);
        printf("# %10s %12s %10s %8s %8s %7s\n", "size (B)", "count", "time (us)", "algbw", "busbw", "#wrong");
    }
    for (size_t bytes = min_bytes; bytes <= max_bytes; bytes = factor > 1 ? bytes * factor : bytes + (1u << 20)) {
        size_t count = bytes / sizeof(float);
        if (count == 0) continue;
        for (int i = 0; i < warmup; i++) MPI_Allreduce(send, recv, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++) MPI_Allreduce(send, recv, (int) count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double local = (MPI_Wtime() - t0) / iters, t;
        MPI_Allreduce(&local, &t, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t /= n;
        long wrong = 0;
        for (size_t i = 0; i < count; i++) {
            float expected = 0;
            for (int r = 0; r < n; r++) expected += (float) ((r + i) % 8);
            if (recv[i] != expected) wrong++;
        }
        long total_wrong;
        MPI_Allreduce(&wrong, &total_wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        double algbw = (double) (count * sizeof(float)) / t / 1e9;
        double busbw = algbw * 2.0 * (n - 1) / n;
        if (rank == 0) {
            printf("  %10zu %12zu %10.2f %8.3f %8.3f %7ld\n", count * sizeof(float), count, t * 1e6, algbw, busbw,
                   total_wrong);
        }
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
