package io.jccl.nativenet;

import io.jccl.spi.ListenComm;

/** A native plugin's {@code listenComm} (ncclNet or ncclCollNet). */
final class NativeListenComm extends NativeComm implements ListenComm {
    NativeListenComm(Object plugin, long pointer, int dev) {
        super(plugin, pointer, dev, false);
    }
}
