package io.jccl.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The two I/O engines a socket transport could be built on, moving the same bytes over one TCP
 * connection: NIO non-blocking channels driven by spinning threads (JcclSocket's design) and
 * Netty's native epoll transport driven by its event loops. A transport moves registered memory,
 * so both write from direct memory without copies (Netty through a wrapped buffer per message).
 */
public final class IoEngineComparison {
    private IoEngineComparison() {
    }

    /** @return whether Netty's native epoll transport loads here, and if not why */
    public static String nettyEpollStatus() {
        return Epoll.isAvailable() ? "available" : "unavailable: " + Epoll.unavailabilityCause();
    }

    /** @return GB/s of NIO non-blocking channels, each side spinning on its own thread */
    public static double nioThroughputGBps(int size, long messages) throws Exception {
        try (Pair p = Pair.open()) {
            p.client.configureBlocking(false);
            p.server.configureBlocking(false);
            ByteBuffer out = ByteBuffer.allocateDirect(size);
            ByteBuffer in = ByteBuffer.allocateDirect(size);
            Throwable[] failure = new Throwable[1];
            long t0 = System.nanoTime();
            Thread w = Measure.start("nio-writer", () -> {
                for (long m = 0; m < messages; m++) {
                    out.clear();
                    while (out.hasRemaining()) {
                        p.client.write(out);
                    }
                }
            }, failure);
            Thread r = Measure.start("nio-reader", () -> {
                for (long m = 0; m < messages; m++) {
                    in.clear();
                    while (in.hasRemaining()) {
                        if (p.server.read(in) < 0) {
                            throw new EOFException();
                        }
                    }
                }
            }, failure);
            Measure.join(failure, w, r);
            return Measure.gbPerSecond(size * messages, System.nanoTime() - t0);
        }
    }

    /** @return the median one-way latency in microseconds of NIO non-blocking ping-pong, both sides spinning */
    public static double nioPingPongMicros(int size, int iterations, int warmup) throws Exception {
        try (Pair p = Pair.open()) {
            p.client.configureBlocking(false);
            p.server.configureBlocking(false);
            ByteBuffer ping = ByteBuffer.allocateDirect(size);
            ByteBuffer pong = ByteBuffer.allocateDirect(size);
            long[] rtt = new long[iterations];
            Throwable[] failure = new Throwable[1];
            Thread echo = Measure.start("nio-echo", () -> {
                for (int i = 0; i < iterations + warmup; i++) {
                    spinRead(p.server, pong.clear());
                    pong.flip();
                    while (pong.hasRemaining()) {
                        p.server.write(pong);
                    }
                }
            }, failure);
            for (int i = 0; i < iterations + warmup; i++) {
                long t0 = System.nanoTime();
                ping.clear();
                while (ping.hasRemaining()) {
                    p.client.write(ping);
                }
                spinRead(p.client, ping.clear());
                if (i >= warmup) {
                    rtt[i - warmup] = System.nanoTime() - t0;
                }
            }
            Measure.join(failure, echo);
            return Measure.median(rtt) / 2e3;
        }
    }

    /** @return GB/s of Netty epoll, {@code depth} writes in flight, one event loop per side */
    public static double nettyThroughputGBps(int size, long messages, int depth) throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
        try {
            long total = size * messages;
            AtomicLong received = new AtomicLong();
            CountDownLatch done = new CountDownLatch(1);
            Channel server = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    ByteBuf b = (ByteBuf) msg;
                                    if (received.addAndGet(b.readableBytes()) >= total) {
                                        done.countDown();
                                    }
                                    b.release();
                                }
                            });
                        }
                    }).bind(new InetSocketAddress(LocalAddress.pick(), 0)).sync().channel();
            Channel client = new Bootstrap().group(group).channel(EpollSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(server.localAddress()).sync().channel();
            ByteBuffer payload = ByteBuffer.allocateDirect(size);
            Semaphore inFlight = new Semaphore(depth);
            long t0 = System.nanoTime();
            for (long m = 0; m < messages; m++) {
                inFlight.acquire();
                client.writeAndFlush(Unpooled.wrappedBuffer(payload.duplicate())).addListener(f -> inFlight.release());
            }
            if (!done.await(120, TimeUnit.SECONDS)) {
                throw new IOException("Netty epoll moved " + received.get() + " of " + total + " bytes in 120 s");
            }
            long nanos = System.nanoTime() - t0;
            client.close().sync();
            server.close().sync();
            return Measure.gbPerSecond(total, nanos);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** @return the median one-way latency in microseconds of Netty epoll ping-pong (echo on the event loop) */
    public static double nettyPingPongMicros(int size, int iterations, int warmup) throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(2, EpollIoHandler.newFactory());
        try {
            Channel server = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    ctx.writeAndFlush(msg);
                                }
                            });
                        }
                    }).bind(new InetSocketAddress(LocalAddress.pick(), 0)).sync().channel();
            AtomicLong echoed = new AtomicLong();
            Channel client = new Bootstrap().group(group).channel(EpollSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            ByteBuf b = (ByteBuf) msg;
                            echoed.addAndGet(b.readableBytes());
                            b.release();
                        }
                    }).connect(server.localAddress()).sync().channel();
            ByteBuffer payload = ByteBuffer.allocateDirect(size);
            long[] rtt = new long[iterations];
            for (int i = 0; i < iterations + warmup; i++) {
                long target = (long) (i + 1) * size;
                long t0 = System.nanoTime();
                client.writeAndFlush(Unpooled.wrappedBuffer(payload.duplicate()));
                while (echoed.get() < target) {
                    Thread.onSpinWait();
                }
                if (i >= warmup) {
                    rtt[i - warmup] = System.nanoTime() - t0;
                }
            }
            client.close().sync();
            server.close().sync();
            return Measure.median(rtt) / 2e3;
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private static void spinRead(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new EOFException();
            }
        }
    }

    /** A connected NIO pair over the benchmark address. */
    private record Pair(SocketChannel client, SocketChannel server) implements AutoCloseable {
        static Pair open() throws IOException {
            InetAddress a = LocalAddress.pick();
            try (ServerSocketChannel l = ServerSocketChannel.open()) {
                l.bind(new InetSocketAddress(a, 0));
                SocketChannel c = SocketChannel.open(l.getLocalAddress());
                SocketChannel s = l.accept();
                c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                s.setOption(StandardSocketOptions.TCP_NODELAY, true);
                return new Pair(c, s);
            }
        }

        @Override
        public void close() throws IOException {
            client.close();
            server.close();
        }
    }
}
