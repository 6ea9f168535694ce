package io.jccl.core.collective;

import io.jccl.core.JcclException;
import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.transport.RecvConnection;
import io.jccl.core.transport.SendConnection;
import io.jccl.spi.DataType;
import io.jccl.spi.NetResult;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * One tree of one channel of a collective ({@link DoubleBinaryTree}): the share
 * {@code [base, base + count)} moves as slot-sized slices, up the tree (each rank adds its
 * children's slices to its input and sends the sum to its parent; the root ends with the
 * result), down the tree (each rank writes its parent's slice to its output and forwards it to
 * its children), or up then down (all-reduce: the root turns the sums around). The two
 * directions progress independently, so slice {@code k} goes down while slice {@code k + 1} still
 * goes up: the pipeline is the tree's depth long, not the ring's {@code n}.
 */
final class TreeTask extends Task {
    /** What the task does. */
    enum Shape {
        /** Reduce to the root. */
        UP("tree reduce"),
        /** Broadcast from the root. */
        DOWN("tree broadcast"),
        /** All-reduce: reduce to the root, then broadcast its result. */
        UP_DOWN("tree all-reduce");

        final String label;

        Shape(String label) {
            this.label = label;
        }
    }

    /** Slices per {@link #progress} call, so that other channels get their turn. */
    private static final int SLICES_PER_PASS = 8;

    private final Shape shape;
    private final String operation;
    private final int tree;
    private final SendConnection toParent;
    private final RecvConnection fromParent;
    private final SendConnection[] toChildren;
    private final RecvConnection[] fromChildren;
    private final ReductionKernel kernel;
    private final DataType type;
    private final ReduceOp accumulate;
    private final int divisor;
    private final MemorySegment input;
    private final MemorySegment output;
    private final long base;
    private final long count;
    private final long sliceElements;
    private final long slices;
    private final boolean root;
    /** Root of a broadcast whose output is not its input: it copies its data too. */
    private final boolean rootCopies;
    private long up;
    private long down;

    /**
     * @param links     the connections of this rank in this tree
     * @param op        the operation; {@link ReduceOp#AVG} sums and divides by {@code divisor} at the root
     * @param rootCopies for a broadcast: the root writes its input to its output too
     */
    TreeTask(Shape shape, String operation, TreeLinks links, ReductionKernel kernel, DataType type, ReduceOp op,
             int divisor, MemorySegment input, MemorySegment output, long base, long count, long sliceElements,
             boolean rootCopies) {
        this.shape = shape;
        this.operation = operation;
        this.tree = links.tree();
        this.toParent = links.toParent();
        this.fromParent = links.fromParent();
        this.toChildren = links.toChildren();
        this.fromChildren = links.fromChildren();
        this.root = links.toParent() == null;
        this.kernel = kernel;
        this.type = type;
        this.accumulate = op == ReduceOp.AVG ? ReduceOp.SUM : op;
        this.divisor = op == ReduceOp.AVG ? divisor : 1;
        this.input = input;
        this.output = output;
        this.base = base;
        this.count = count;
        this.sliceElements = Math.max(1, sliceElements);
        this.slices = (count + this.sliceElements - 1) / this.sliceElements;
        this.rootCopies = rootCopies;
        // The directions this rank takes no part in are done from the start.
        this.up = shape == Shape.DOWN ? slices : 0;
        this.down = shape == Shape.UP || (shape == Shape.UP_DOWN && root) ? slices : 0;
        this.done = slices == 0;
    }

    @Override
    void start() {
        if (shape != Shape.DOWN) {
            for (RecvConnection c : fromChildren) {
                c.expect(slices);
            }
        }
        if (shape != Shape.UP && !root) {
            fromParent.expect(slices);
        }
    }

    @Override
    int progress() {
        int work = 0;
        while (work < SLICES_PER_PASS && up < slices && upReady()) {
            up(up++);
            work++;
        }
        while (work < SLICES_PER_PASS && down < slices && downReady()) {
            down(down++);
            work++;
        }
        if (up == slices && down == slices) {
            done = true;
        }
        return work;
    }

    private long first(long slice) {
        return base + slice * sliceElements;
    }

    private long elements(long slice) {
        return Math.min(sliceElements, base + count - first(slice));
    }

    private boolean upReady() {
        for (RecvConnection c : fromChildren) {
            if (!c.hasData()) {
                return false;
            }
        }
        if (!root) {
            return toParent.hasRoom();
        }
        // The all-reduce's root sends the result down as soon as it has it.
        return shape != Shape.UP_DOWN || childrenHaveRoom();
    }

    private boolean downReady() {
        if (root && shape == Shape.DOWN) {
            return childrenHaveRoom();
        }
        return fromParent.hasData() && childrenHaveRoom();
    }

    private boolean childrenHaveRoom() {
        for (SendConnection c : toChildren) {
            if (!c.hasRoom()) {
                return false;
            }
        }
        return true;
    }

    /** Slice {@code k} on the way up: this rank's input plus its children's sums, to the parent (or the output). */
    private void up(long k) {
        long n = elements(k);
        int size = type.size();
        long bytes = n * size;
        long at = first(k) * size;
        MemorySegment dst = root ? output : toParent.fillSlot();
        long dstOffset = root ? at : 0;
        if (fromChildren.length == 0) {
            kernel.copy(input, at, dst, dstOffset, bytes);
        }
        for (int i = 0; i < fromChildren.length; i++) {
            RecvConnection c = fromChildren[i];
            check(c, bytes, k, "up");
            // The first child's sum is added to the input, the next to that result.
            kernel.reduce(type, accumulate, c.dataSlot(), 0, i == 0 ? input : dst, i == 0 ? at : dstOffset, dst,
                    dstOffset, n);
        }
        for (RecvConnection c : fromChildren) {
            c.consume();
        }
        if (!root) {
            toParent.publish((int) bytes);
            return;
        }
        if (divisor != 1) {
            kernel.divide(type, output, at, n, divisor);
        }
        if (shape == Shape.UP_DOWN) {
            forward(output, at, bytes);
        }
    }

    /** Slice {@code k} on the way down: the parent's data (or the root's input) to the output and the children. */
    private void down(long k) {
        long n = elements(k);
        int size = type.size();
        long bytes = n * size;
        long at = first(k) * size;
        if (root) {
            if (rootCopies) {
                kernel.copy(input, at, output, at, bytes);
            }
            forward(input, at, bytes);
            return;
        }
        check(fromParent, bytes, k, "down");
        MemorySegment data = fromParent.dataSlot();
        kernel.copy(data, 0, output, at, bytes);
        forward(data, 0, bytes);
        fromParent.consume();
    }

    private void forward(MemorySegment src, long offset, long bytes) {
        for (SendConnection c : toChildren) {
            kernel.copy(src, offset, c.fillSlot(), 0, bytes);
            c.publish((int) bytes);
        }
    }

    private void check(RecvConnection c, long bytes, long slice, String direction) {
        if (c.dataSize() != bytes) {
            throw new JcclException(NetResult.INVALID_USAGE, c.peer, "rank " + c.peer + " sent " + c.dataSize()
                    + " bytes where this rank expected " + bytes + " (" + operation + ", " + shape.label + " " + tree
                    + " slice " + slice + " " + direction + "): did every rank call " + operation
                    + " with the same count, type and root?", null);
        }
    }

    @Override
    int blockingPeer() {
        RecvConnection r = waitingRecv();
        if (r != null) {
            return r.peer;
        }
        SendConnection s = waitingSend();
        return s != null ? s.peer : -1;
    }

    private RecvConnection waitingRecv() {
        if (up < slices) {
            for (RecvConnection c : fromChildren) {
                if (!c.hasData()) {
                    return c;
                }
            }
        }
        if (down < slices && !root && !fromParent.hasData()) {
            return fromParent;
        }
        return null;
    }

    private SendConnection waitingSend() {
        if (up < slices && !root && !toParent.hasRoom()) {
            return toParent;
        }
        for (SendConnection c : toChildren) {
            if (!c.hasRoom()) {
                return c;
            }
        }
        return null;
    }

    @Override
    String waitingFor() {
        RecvConnection r = waitingRecv();
        if (r != null) {
            return r.waitingFor();
        }
        SendConnection s = waitingSend();
        if (s != null) {
            return s.waitingFor();
        }
        return shape.label + " " + tree + " slice up " + up + " down " + down + " of " + slices;
    }
}
