// JCCL's all-reduce between GPUs of one host (PeerRing): a ring in which every step is a GPU's kernel
// writing a slot of the next GPU's receive FIFO directly, through CUDA IPC or peer access (NVLink or
// PCIe), as NCCL's "simple" protocol does.
//
// Each rank's region is its own device memory, mapped by its two ring neighbours. Per channel (one
// block each) it holds:
//   counters + 0    tail: advanced by the previous rank after it wrote one of our FIFO slots
//   counters + 64   head: advanced by the next rank after it read one of the slots we wrote it
//   counters + 128  our send and receive step counts, kept between calls (a call continues the counts)
//   counters + 192  RING_SLOTS u32: the bytes the previous rank wrote into each slot of ours (read by
//                   NetFifo's proxy, which sends a slot's bytes when the "next rank" is the network)
//   fifo            RING_SLOTS slots of RING_SLOT_BYTES, written by the previous rank: at mine +
//                   RING_FIFO_OFFSET between GPUs; through the network (NetFifo), recv_fifo and
//                   send_fifo are this rank's slots, in pinned host memory or, with GPUDirect, in its
//                   own GPU memory apart from the counters
// A sender waits until the next rank has read the slot it reuses (head > step - SLOTS), writes it,
// fences at system scope (the data reaches the peer before the counter does) and stores the next
// rank's tail. A receiver waits for its tail to pass its step, reads the slot with volatile loads (a
// line cached by an earlier use of the slot must not be read) and stores the previous rank's head.
//
// Every wait is bounded: once the host sets control[0] (the communicator failed or aborted), or after
// timeout_ns without progress (control[1] = 1 then, and control[0] = 1 stops the other blocks), the
// kernel returns with the output incomplete; the host reads control[] and fails the communicator.
//
// This file is compiled after reduce.cu, whose operation functors (<type>_<op>_op) it uses; PeerRing
// defines RING_SLOTS, RING_SLOT_BYTES, RING_CHANNEL_STRIDE and RING_FIFO_OFFSET before it.

__device__ __forceinline__ u64 ring_now() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ uint4 ring_load_volatile(const uint4* p) {
    uint4 v;
    asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

// Thread 0 only: waits until *counter >= target; false when the call must stop.
__device__ bool ring_wait(volatile u64* counter, u64 target, volatile u32* control, u64 timeout_ns) {
    if (*counter >= target) return true;
    u64 start = ring_now();
    for (u32 spins = 1;; spins++) {
        if (*counter >= target) return true;
        if ((spins & 1023) == 0) {
            if (control[0] != 0) return false;
            if (ring_now() - start > timeout_ns) {
                control[1] = 1;
                __threadfence_system();
                control[0] = 1;
                return false;
            }
        }
    }
}

// One block's state for a call.
struct RingChannel {
    volatile u64* tail;      // ours, written by the previous rank
    volatile u64* head;      // ours, written by the next rank
    volatile u64* next_tail; // the next rank's tail
    volatile u64* prev_head; // the previous rank's head
    volatile u32* next_sizes; // the next rank's slot sizes
    char* recv_fifo;         // ours
    char* send_fifo;         // the next rank's
    volatile u32* control;
    u64 timeout_ns;
    u64* send_step;          // in shared memory: the block's counts
    u64* recv_step;
    int* stop;               // in shared memory: set by thread 0 when the call must stop
};

// Moves n elements of one ring step: v = recv slot (op) pre(local), or one of them alone; v goes to
// dst and to the next rank's send slot where they are given. 16-byte loads and stores when every
// pointer allows, four of them in flight per thread. pre is the operation's treatment of an input
// as it enters the reduction (avg on floats: NCCL's multiplication by 1/n; otherwise nothing).
template <typename T, typename Op>
__device__ void ring_move(const T* src, const T* local, T* dst, T* slot, u64 n, Op op) {
    const u64 per = 16 / sizeof(T);
    const u64 stride = blockDim.x;
    u64 vectors = 0;
    if ((((u64) src | (u64) local | (u64) dst | (u64) slot) & 15) == 0) {
        vectors = n / per;
        const uint4* s4 = (const uint4*) src;
        const uint4* l4 = (const uint4*) local;
        uint4* d4 = (uint4*) dst;
        uint4* o4 = (uint4*) slot;
        const int U = 4;
        u64 i = threadIdx.x;
        for (; i + (U - 1) * stride < vectors; i += U * stride) {
            Vec16 a[U], b[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (src) a[u].v = ring_load_volatile(s4 + i + u * stride);
                if (local) b[u].v = l4[i + u * stride];
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                Vec16 r;
                if (src && local) {
                    const T* xs = (const T*) a[u].bytes;
                    const T* ys = (const T*) b[u].bytes;
                    T* zs = (T*) r.bytes;
#pragma unroll
                    for (int k = 0; k < (int) per; k++) zs[k] = op(xs[k], op.pre(ys[k]));
                } else if (local) {
                    const T* ys = (const T*) b[u].bytes;
                    T* zs = (T*) r.bytes;
#pragma unroll
                    for (int k = 0; k < (int) per; k++) zs[k] = op.pre(ys[k]);
                } else {
                    r = a[u];
                }
                if (dst) d4[i + u * stride] = r.v;
                if (slot) o4[i + u * stride] = r.v;
            }
        }
        for (; i < vectors; i += stride) {
            Vec16 a, b, r;
            if (src) a.v = ring_load_volatile(s4 + i);
            if (local) b.v = l4[i];
            if (src && local) {
                const T* xs = (const T*) a.bytes;
                const T* ys = (const T*) b.bytes;
                T* zs = (T*) r.bytes;
#pragma unroll
                for (int k = 0; k < (int) per; k++) zs[k] = op(xs[k], op.pre(ys[k]));
            } else if (local) {
                const T* ys = (const T*) b.bytes;
                T* zs = (T*) r.bytes;
#pragma unroll
                for (int k = 0; k < (int) per; k++) zs[k] = op.pre(ys[k]);
            } else {
                r = a;
            }
            if (dst) d4[i] = r.v;
            if (slot) o4[i] = r.v;
        }
    }
    for (u64 i = vectors * per + threadIdx.x; i < n; i += stride) {
        T a = src ? ((volatile const T*) src)[i] : T();
        T b = local ? op.pre(local[i]) : T();
        T r = src && local ? op(a, b) : src ? a : b;
        if (dst) dst[i] = r;
        if (slot) slot[i] = r;
    }
}

// One step of the ring for this block: receive (from our FIFO) and/or send (into the next rank's),
// combining with local (the input) and writing dst (the output) where given. Every rank makes the
// same steps, an empty chunk included, so the counters stay in step. False when the call must stop.
template <typename T, typename Op>
__device__ bool ring_step(RingChannel& c, bool recv, bool send, const T* local, T* dst, u64 n, Op op) {
    if (threadIdx.x == 0) {
        bool ok = true;
        if (recv) ok = ring_wait(c.tail, *c.recv_step + 1, c.control, c.timeout_ns);
        if (ok && send && *c.send_step >= RING_SLOTS) {
            ok = ring_wait(c.head, *c.send_step - RING_SLOTS + 1, c.control, c.timeout_ns);
        }
        if (!ok) *c.stop = 1;
        // Before the fence below, so the size is visible before the tail that publishes the slot.
        else if (send) c.next_sizes[*c.send_step % RING_SLOTS] = (u32) (n * sizeof(T));
    }
    __syncthreads();
    if (*c.stop) return false;
    const T* src = recv ? (const T*) (c.recv_fifo + (*c.recv_step % RING_SLOTS) * (u64) RING_SLOT_BYTES) : 0;
    T* slot = send ? (T*) (c.send_fifo + (*c.send_step % RING_SLOTS) * (u64) RING_SLOT_BYTES) : 0;
    ring_move(src, local, dst, slot, n, op);
    if (send) __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        if (send) {
            *c.next_tail = *c.send_step + 1;
            *c.send_step += 1;
        }
        if (recv) {
            *c.prev_head = *c.recv_step + 1;
            *c.recv_step += 1;
        }
    }
    return true;
}

__device__ __forceinline__ int ring_mod(int a, int n) { return ((a % n) + n) % n; }

// What a kernel runs (PeerRing's kinds): the collectives of NCCL's ring algorithm.
#define RING_ALL_REDUCE 0
#define RING_REDUCE_SCATTER 1
#define RING_ALL_GATHER 2
#define RING_BROADCAST 3
#define RING_REDUCE 4
// All-reduce of two ranks in one exchange: each sends its whole round and reduces what the other
// sent, one hop instead of the ring's two (both compute other (op) mine, the same bits as the ring).
#define RING_ALL_REDUCE_PAIR 5

// One round of a block's share: chunk k is at off(k) of the input (or output) and holds len(k)
// elements. All-reduce cuts the round's range into n chunks; reduce-scatter and all-gather take the
// round's range of every rank's block (chunk k in block k); broadcast and reduce move it whole.
struct RingRound {
    bool split;   // all-reduce
    bool blocks;  // reduce-scatter, all-gather
    u64 at;       // the round's first element (of the buffer, or of each block)
    u64 left;     // elements of the share from there
    u64 chunk;    // elements of a chunk
    u64 count;    // elements of a block
    __device__ u64 off(int k) const {
        return split ? at + min(left, (u64) k * chunk) : blocks ? (u64) k * count + at : at;
    }
    __device__ u64 len(int k) const {
        return split ? min(left, (u64) (k + 1) * chunk) - min(left, (u64) k * chunk) : min(left, chunk);
    }
};

// Reduce-scatter's steps before this rank's own chunk: chunk rank-1 goes out, then n-2 receive,
// reduce with the input and send on.
template <typename T, typename Op>
__device__ bool ring_scatter_start(RingChannel& c, const RingRound& r, const T* in, int nranks, int rank, Op op) {
    int k = ring_mod(rank - 1, nranks);
    if (!ring_step(c, false, true, in + r.off(k), (T*) 0, r.len(k), op)) return false;
    for (int j = 2; j < nranks; j++) {
        k = ring_mod(rank - j, nranks);
        if (!ring_step(c, true, true, in + r.off(k), (T*) 0, r.len(k), op)) return false;
    }
    return true;
}

// All-gather's steps after this rank's own chunk went out: n-2 receive, copy out and send on, then
// the last receive.
template <typename T, typename Op>
__device__ bool ring_gather_rest(RingChannel& c, const RingRound& r, T* out, int nranks, int rank, Op op) {
    for (int j = 1; j < nranks - 1; j++) {
        int k = ring_mod(rank - j, nranks);
        if (!ring_step(c, true, true, (const T*) 0, out + r.off(k), r.len(k), op)) return false;
    }
    int k = ring_mod(rank + 1, nranks);
    return ring_step(c, true, false, (const T*) 0, out + r.off(k), r.len(k), op);
}

// NCCL's ring collectives, per block over its channel's share [begin, end) of count elements (of the
// buffer for all-reduce, broadcast and reduce; of each rank's block for reduce-scatter and all-gather),
// round by round: all-reduce is reduce-scatter (n-1 steps) then all-gather (n-1 steps); broadcast and
// reduce a chain from the root, or to it.
template <typename T, typename Op>
__device__ void ring_collective(int kind, int root, const T* in, T* out, u64 count, int nranks, int rank, char* mine,
                                char* next, char* prev, char* recv_fifo, char* send_fifo, volatile u32* control,
                                u64 timeout_ns, Op op) {
    const u64 ch = blockIdx.x;
    char* counters = mine + ch * RING_CHANNEL_STRIDE;
    __shared__ u64 send_step, recv_step;
    __shared__ int stop;
    RingChannel c;
    c.tail = (volatile u64*) counters;
    c.head = (volatile u64*) (counters + 64);
    c.next_tail = (volatile u64*) (next + ch * RING_CHANNEL_STRIDE);
    c.prev_head = (volatile u64*) (prev + ch * RING_CHANNEL_STRIDE + 64);
    c.next_sizes = (volatile u32*) (next + ch * RING_CHANNEL_STRIDE + 192);
    c.recv_fifo = recv_fifo + ch * RING_SLOTS * (u64) RING_SLOT_BYTES;
    c.send_fifo = send_fifo + ch * RING_SLOTS * (u64) RING_SLOT_BYTES;
    c.control = control;
    c.timeout_ns = timeout_ns;
    c.send_step = &send_step;
    c.recv_step = &recv_step;
    c.stop = &stop;
    u64* kept = (u64*) (counters + 128);

    const u64 align = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
    const u64 slot_elems = RING_SLOT_BYTES / sizeof(T);
    u64 per = (count + gridDim.x - 1) / gridDim.x;
    per = (per + align - 1) / align * align;
    const u64 begin = min(count, ch * per);
    const u64 end = min(count, begin + per);

    if (threadIdx.x == 0) {
        send_step = kept[0];
        recv_step = kept[1];
        stop = control[0] != 0;
    }
    __syncthreads();
    RingRound r;
    r.split = kind == RING_ALL_REDUCE;
    r.blocks = kind == RING_REDUCE_SCATTER || kind == RING_ALL_GATHER;
    r.count = count;
    for (r.at = begin; r.at < end && !stop;) {
        r.left = end - r.at;
        u64 chunk = r.split ? (r.left + nranks - 1) / nranks : r.left;
        r.chunk = min(slot_elems, (chunk + align - 1) / align * align);
        bool ok;
        if (kind == RING_ALL_REDUCE) {
            ok = ring_scatter_start(c, r, in, nranks, rank, op)
                    && ring_step(c, true, true, in + r.off(rank), out + r.off(rank), r.len(rank), op)
                    && ring_gather_rest(c, r, out, nranks, rank, op);
        } else if (kind == RING_REDUCE_SCATTER) {
            ok = ring_scatter_start(c, r, in, nranks, rank, op)
                    && ring_step(c, true, false, in + r.off(rank), out + r.at, r.len(rank), op);
        } else if (kind == RING_ALL_GATHER) {
            ok = ring_step(c, false, true, in + r.at, out + r.off(rank), r.len(rank), op)
                    && ring_gather_rest(c, r, out, nranks, rank, op);
        } else if (kind == RING_ALL_REDUCE_PAIR) {
            ok = ring_step(c, false, true, in + r.at, (T*) 0, r.len(0), op)
                    && ring_step(c, true, false, in + r.at, out + r.at, r.len(0), op);
        } else if (kind == RING_BROADCAST) {
            const int position = ring_mod(rank - root, nranks); // 0: the root, n-1: the chain's end
            ok = position == 0 ? ring_step(c, false, true, in + r.at, in == out ? (T*) 0 : out + r.at, r.len(0), op)
                               : ring_step(c, true, position < nranks - 1, (const T*) 0, out + r.at, r.len(0), op);
        } else { // RING_REDUCE: the chain starts after the root and ends at it
            const int position = ring_mod(rank - root - 1, nranks); // n-1: the root
            ok = ring_step(c, position > 0, position < nranks - 1, in + r.at, position == nranks - 1 ? out + r.at : (T*) 0,
                           r.len(0), op);
        }
        if (!ok) break;
        r.at += r.split ? min(r.left, r.chunk * nranks) : min(r.left, r.chunk);
    }
    if (threadIdx.x == 0) {
        kept[0] = send_step;
        kept[1] = recv_step;
    }
}

// An operation as the ring applies it: op combines two values; pre treats an input as it enters.
template <typename T, typename Op>
struct RingPlain {
    Op op;
    __device__ T operator()(T x, T y) const { return op(x, y); }
    __device__ T pre(T x) const { return x; }
};

// NCCL's avg on floating-point types: every input multiplied by 1/n (rounded to the type) as it
// enters, then summed (NCCL's "pre-multiplied sum"; its integers sum, then divide). Mul is the
// type's prod functor: one rounding of the exact product, as NCCL's __hmul and float multiply.
template <typename T, typename Sum, typename Mul>
struct RingPreMulSum {
    T scale;
    __device__ T operator()(T x, T y) const { return Sum()(x, y); }
    __device__ T pre(T x) const { return Mul()(x, scale); }
};

// jccl_ring_<type>_<op>: the collectives of one type and operation (avg on integers and 8-bit
// floats: sum, then reduce.cu's division); broadcast and all-gather move bytes with uint8's.
#define RING_KERNEL(NAME, OP, T)                                                                         \
    extern "C" __global__ void __launch_bounds__(1024) jccl_ring_##NAME##_##OP(                          \
            int kind, int root, const T* in, T* out, u64 count, int nranks, int rank, char* mine,        \
            char* next, char* prev, char* recv_fifo, char* send_fifo, volatile u32* control,             \
            u64 timeout_ns) {                                                                            \
        ring_collective(kind, root, in, out, count, nranks, rank, mine, next, prev, recv_fifo, send_fifo, \
                        control, timeout_ns, RingPlain<T, NAME##_##OP##_op>());                          \
    }

// jccl_ring_<type>_avg for float, double, float16 and bfloat16: SCALE(d) is 1/n (a double) in T.
#define RING_AVG_KERNEL(NAME, T, SCALE)                                                                  \
    extern "C" __global__ void __launch_bounds__(1024) jccl_ring_##NAME##_avg(                           \
            int kind, int root, const T* in, T* out, u64 count, int nranks, int rank, char* mine,        \
            char* next, char* prev, char* recv_fifo, char* send_fifo, volatile u32* control,             \
            u64 timeout_ns) {                                                                            \
        RingPreMulSum<T, NAME##_sum_op, NAME##_prod_op> op;                                              \
        op.scale = SCALE(1.0 / nranks);                                                                  \
        ring_collective(kind, root, in, out, count, nranks, rank, mine, next, prev, recv_fifo, send_fifo, \
                        control, timeout_ns, op);                                                        \
    }
#define RING_SCALE_FLOAT32(d) ((float) (d))
#define RING_SCALE_FLOAT64(d) (d)
#define RING_SCALE_FLOAT16(d) to_float16((float) (d))
#define RING_SCALE_BFLOAT16(d) to_bfloat16((float) (d))

// PeerRing appends RING_KERNEL(<type>, <op>, <C type>) (or RING_AVG_KERNEL) for each pair a call
// needs, compiled on first use: one pair compiles in a fraction of the time all 48 take.
