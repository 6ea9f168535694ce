// The staging ceiling of a host-memory network plugin under NCCL: pinned host <-> device copy
// bandwidth (256 MiB, best of 10), which every byte of a host-staged transfer crosses.
#include <cstdio>
#include <cuda_runtime.h>

static float best(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    float bestMs = 1e30f;
    for (int i = 0; i < 10; i++) {
        cudaEventRecord(a, s);
        cudaMemcpyAsync(dst, src, n, kind, s);
        cudaEventRecord(b, s);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        if (ms < bestMs) bestMs = ms;
    }
    return n / (bestMs / 1e3f) / 1e9f;
}

int main() {
    size_t n = 256u << 20;
    void *host, *dev, *dev2;
    cudaStream_t s;
    if (cudaMallocHost(&host, n) != cudaSuccess || cudaMalloc(&dev, n) != cudaSuccess
        || cudaMalloc(&dev2, n) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess) {
        printf("no CUDA device\n");
        return 1;
    }
    printf("pinned host->device: %.2f GB/s\n", best(dev, host, n, cudaMemcpyHostToDevice, s));
    printf("pinned device->host: %.2f GB/s\n", best(host, dev, n, cudaMemcpyDeviceToHost, s));
    printf("device->device: %.2f GB/s\n", best(dev2, dev, n, cudaMemcpyDeviceToDevice, s));
    return 0;
}
