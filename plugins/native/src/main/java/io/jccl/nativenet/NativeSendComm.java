package io.jccl.nativenet;

import io.jccl.spi.SendComm;

/** A native plugin's {@code sendComm}. */
final class NativeSendComm extends NativeComm implements SendComm {
    NativeSendComm(Object plugin, long pointer, int dev) {
        super(plugin, pointer, dev, true);
    }
}
