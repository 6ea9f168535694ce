package io.jccl.tck;

import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.discovery.NetPluginDiscovery;

import java.lang.reflect.Constructor;
import java.lang.reflect.Modifier;
import java.util.Objects;
import java.util.Optional;

/**
 * How the kit's forked peer JVM obtains the transport under test: by name through
 * {@link NetPluginDiscovery} (ServiceLoader), or by the class name of a {@link NetPlugin} with a
 * public no-argument constructor. The peer JVM runs with this JVM's class path, so whatever the
 * kit sees, the peer sees.
 *
 * <p>Used by the rules that kill a peer process ({@code fault.2}); a kit class whose transport
 * cannot be created in another JVM overrides {@link NetPluginTck#peerTransport()} to return
 * empty, and those rules are skipped with that reason.
 */
public final class PeerTransport {
    private static final String BY_NAME = "name:";
    private static final String BY_CLASS = "class:";

    private final String spec;

    private PeerTransport(String spec) {
        this.spec = spec;
    }

    /** @return the transport of this name, as {@code NCCL_NET} would select it */
    public static PeerTransport byName(String name) {
        return new PeerTransport(BY_NAME + Objects.requireNonNull(name, "name"));
    }

    /** @return a new instance of this class (public, with a public no-argument constructor) */
    public static PeerTransport byClass(Class<? extends NetPlugin> type) {
        return byClassName(type.getName());
    }

    /** @return a new instance of the class of this name, loaded in the peer JVM */
    public static PeerTransport byClassName(String className) {
        return new PeerTransport(BY_CLASS + Objects.requireNonNull(className, "className"));
    }

    /**
     * @return the same transport as {@code plugin}: by class when its class is public with a public
     *         no-argument constructor (as ServiceLoader providers are), else by name
     */
    public static Optional<PeerTransport> sameAs(NetPlugin plugin) {
        Class<?> c = plugin.getClass();
        if (Modifier.isPublic(c.getModifiers()) && !c.isAnonymousClass() && !c.isMemberClass()) {
            try {
                Constructor<?> ctor = c.getConstructor();
                if (Modifier.isPublic(ctor.getModifiers())) {
                    return Optional.of(byClassName(c.getName()));
                }
            } catch (NoSuchMethodException e) {
                // Falls back to the name below.
            }
        }
        return Optional.of(byName(plugin.name()));
    }

    /** @return the form passed on the peer's command line: {@code name:NAME} or {@code class:CLASS} */
    public String spec() {
        return spec;
    }

    /**
     * @param spec a {@link #spec()} string
     * @return the peer transport it describes
     * @throws IllegalArgumentException if {@code spec} is neither form
     */
    public static PeerTransport parse(String spec) {
        if (!spec.startsWith(BY_NAME) && !spec.startsWith(BY_CLASS)) {
            throw new IllegalArgumentException("not a peer transport: '" + spec + "'; use name:NAME or class:CLASS");
        }
        return new PeerTransport(spec);
    }

    /**
     * Creates the transport (in the peer JVM), not yet initialised.
     *
     * @throws NetException if no transport has the name
     * @throws ReflectiveOperationException if the class cannot be instantiated
     */
    public NetPlugin create() throws NetException, ReflectiveOperationException {
        if (spec.startsWith(BY_CLASS)) {
            Class<?> c = Class.forName(spec.substring(BY_CLASS.length()));
            return (NetPlugin) c.getConstructor().newInstance();
        }
        String name = spec.substring(BY_NAME.length());
        NetPluginDiscovery found = NetPluginDiscovery.load();
        return found.findNet(name).orElseThrow(() -> NetException.invalidUsage("the peer JVM finds no transport named "
                + name + "; it finds " + found.netPlugins().stream().map(NetPlugin::name).toList()));
    }

    @Override
    public String toString() {
        return spec;
    }
}
