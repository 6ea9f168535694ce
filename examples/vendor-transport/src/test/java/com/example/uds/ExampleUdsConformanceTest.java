package com.example.uds;

import io.jccl.spi.NetPlugin;
import io.jccl.tck.NetPluginTck;

/**
 * Every rule of JCCL's conformance kit against ExampleUds, as `mvn verify` runs it. The kit
 * initialises the transport, runs its numbered rules in order and closes it; rules whose capability
 * the transport lacks (grouped receives: maxRecvs is 1; stray TCP connections: it listens on no TCP
 * port) are skipped by the kit itself, with the reason.
 */
class ExampleUdsConformanceTest extends NetPluginTck {
    @Override
    protected NetPlugin createPlugin() {
        return new ExampleUdsPlugin();
    }
}
