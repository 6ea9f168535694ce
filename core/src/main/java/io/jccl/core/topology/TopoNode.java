package io.jccl.core.topology;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One element of the topology tree, as in NCCL's XML: a tag ({@code system}, {@code cpu},
 * {@code pci}, {@code gpu}, {@code nic}, {@code net}, {@code nvlink}, ...) with attributes in
 * their order and children. Tags and attributes JCCL does not interpret are kept, so that a file
 * read and written again keeps them.
 */
public final class TopoNode {
    private final String tag;
    private final Map<String, String> attributes = new LinkedHashMap<>();
    private final List<TopoNode> children = new ArrayList<>();
    private TopoNode parent;

    public TopoNode(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }

    /** @return the attribute, or {@code null} */
    public String get(String name) {
        return attributes.get(name);
    }

    /** @return the attribute as an integer (decimal, or hex with 0x), or {@code otherwise} if absent or not a number */
    public long getLong(String name, long otherwise) {
        String v = attributes.get(name);
        if (v == null || v.isBlank()) {
            return otherwise;
        }
        try {
            return v.startsWith("0x") || v.startsWith("0X") ? Long.parseUnsignedLong(v.substring(2), 16)
                    : Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            return otherwise;
        }
    }

    public TopoNode set(String name, String value) {
        attributes.put(name, value);
        return this;
    }

    public Map<String, String> attributes() {
        return Collections.unmodifiableMap(attributes);
    }

    public List<TopoNode> children() {
        return Collections.unmodifiableList(children);
    }

    /** @return the parent, or {@code null} for the root */
    public TopoNode parent() {
        return parent;
    }

    /** Adds {@code child} (detached from any other parent), keeping PCI children ordered by bus id as NCCL does. */
    public TopoNode add(TopoNode child) {
        if (child.parent != null) {
            child.parent.children.remove(child);
        }
        child.parent = this;
        int at = children.size();
        String busId = child.get("busid");
        if (busId != null) {
            for (int i = 0; i < children.size(); i++) {
                String other = children.get(i).get("busid");
                if (other != null && busId.compareTo(other) < 0) {
                    at = i;
                    break;
                }
            }
        }
        children.add(at, child);
        return child;
    }

    /** @return the first child with {@code tag}, or {@code null} */
    public TopoNode child(String childTag) {
        for (TopoNode c : children) {
            if (c.tag.equals(childTag)) {
                return c;
            }
        }
        return null;
    }

    /** @return every node under this one (itself included) with {@code tag}, in document order */
    public List<TopoNode> findAll(String wanted) {
        List<TopoNode> out = new ArrayList<>();
        collect(this, wanted, out);
        return out;
    }

    private static void collect(TopoNode n, String wanted, List<TopoNode> out) {
        if (n.tag.equals(wanted)) {
            out.add(n);
        }
        for (TopoNode c : n.children) {
            collect(c, wanted, out);
        }
    }

    /** @return the nearest ancestor (or itself) with {@code wanted}, or {@code null} */
    public TopoNode ancestor(String wanted) {
        for (TopoNode n = this; n != null; n = n.parent) {
            if (n.tag.equals(wanted)) {
                return n;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "<" + tag + (attributes.isEmpty() ? "" : " " + attributes) + ">";
    }
}
