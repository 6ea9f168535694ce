/**
 * CUDA for JCCL through Panama FFM, no JNI and no third-party binding: the driver API of
 * {@code libcuda.so.1}, looked up at run time as NCCL looks it up. Device memory is a
 * {@link java.lang.foreign.MemorySegment} whose address is the device pointer.
 *
 * <p>Needs {@code --enable-native-access=io.jccl.cuda} (or {@code ALL-UNNAMED} on the class path).
 */
module io.jccl.cuda {
    exports io.jccl.cuda;
}
