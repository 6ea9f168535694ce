package io.jccl.nativenet;

import io.jccl.spi.RecvComm;

/** A native plugin's {@code recvComm}. */
final class NativeRecvComm extends NativeComm implements RecvComm {
    NativeRecvComm(Object plugin, long pointer, int dev) {
        super(plugin, pointer, dev, true);
    }
}
