package io.jccl.nativenet;

import io.jccl.spi.CollComm;

/** A native plugin's {@code collComm}. */
final class NativeCollComm extends NativeComm implements CollComm {
    NativeCollComm(Object plugin, long pointer) {
        super(plugin, pointer, -1, true);
    }
}
