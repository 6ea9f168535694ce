package io.jccl.core.topology;

import org.w3c.dom.Element;
import org.w3c.dom.NamedNodeMap;
import org.w3c.dom.Node;
import org.xml.sax.SAXException;
import org.xml.sax.SAXParseException;

import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * NCCL's topology XML, read and written: what {@code NCCL_TOPO_FILE} points NCCL at and what
 * {@code NCCL_TOPO_DUMP_FILE} makes it write, so that a dump from a real cluster loads here and
 * JCCL's detection loads in NCCL. Every element and attribute is kept, known or not, in order.
 */
public final class TopologyXml {
    private TopologyXml() {
    }

    /**
     * @throws IllegalArgumentException if the file is not a topology (naming the file, line and reason)
     */
    public static Topology read(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return read(in, file.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the topology file " + file + ": " + e.getMessage(), e);
        }
    }

    /** @param source names the input in messages */
    public static Topology read(InputStream in, String source) throws IOException {
        Element root;
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            // A topology has no DTD: refusing one keeps external entities out.
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            f.setXIncludeAware(false);
            f.setExpandEntityReferences(false);
            DocumentBuilder b = f.newDocumentBuilder();
            b.setErrorHandler(null);
            root = b.parse(in).getDocumentElement();
        } catch (SAXParseException e) {
            throw new IllegalArgumentException(source + ", line " + e.getLineNumber() + ": not NCCL topology XML: "
                    + e.getMessage(), e);
        } catch (SAXException | ParserConfigurationException e) {
            throw new IllegalArgumentException(source + ": not NCCL topology XML: " + e.getMessage(), e);
        }
        if (!root.getTagName().equals("system")) {
            throw new IllegalArgumentException(source + ": the root element is <" + root.getTagName()
                    + ">; NCCL's topology XML starts with <system version=\"1\">");
        }
        return new Topology(convert(root));
    }

    private static TopoNode convert(Element e) {
        TopoNode n = new TopoNode(e.getTagName());
        NamedNodeMap attrs = e.getAttributes();
        // DOM does not keep attribute order: NCCL's usual order first, the rest as found.
        for (String name : ORDER.getOrDefault(e.getTagName(), new String[0])) {
            if (e.hasAttribute(name)) {
                n.set(name, e.getAttribute(name));
            }
        }
        for (int i = 0; i < attrs.getLength(); i++) {
            Node a = attrs.item(i);
            if (n.get(a.getNodeName()) == null) {
                n.set(a.getNodeName(), a.getNodeValue());
            }
        }
        for (Node c = e.getFirstChild(); c != null; c = c.getNextSibling()) {
            if (c instanceof Element child) {
                n.add(convert(child));
            }
        }
        return n;
    }

    /** The attribute order of NCCL's dumps, by element. */
    private static final Map<String, String[]> ORDER = Map.of(
            "system", new String[] {"version"},
            "cpu", new String[] {"host_hash", "numaid", "affinity", "arch", "vendor", "familyid", "modelid"},
            "pci", new String[] {"busid", "class", "vendor", "device", "subsystem_vendor", "subsystem_device",
                "link_speed", "link_width"},
            "gpu", new String[] {"dev", "sm", "rank", "gdr"},
            "net", new String[] {"name", "dev", "latency", "speed", "port", "guid", "maxconn", "gdr", "coll"},
            "nvlink", new String[] {"target", "count", "tclass"});

    /** Writes {@code topology} as NCCL's XML, two spaces per level. */
    public static void write(Topology topology, Path file) {
        try {
            Files.writeString(file, toXml(topology), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the topology to " + file + ": " + e.getMessage(), e);
        }
    }

    public static String toXml(Topology topology) {
        StringWriter w = new StringWriter();
        try {
            write(topology.root(), w, 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return w.toString();
    }

    private static void write(TopoNode n, Writer w, int depth) throws IOException {
        w.write("  ".repeat(depth));
        w.write('<');
        w.write(n.tag());
        for (Map.Entry<String, String> a : n.attributes().entrySet()) {
            w.write(' ');
            w.write(a.getKey());
            w.write("=\"");
            w.write(escape(a.getValue()));
            w.write('"');
        }
        if (n.children().isEmpty()) {
            w.write("/>\n");
            return;
        }
        w.write(">\n");
        for (TopoNode c : n.children()) {
            write(c, w, depth + 1);
        }
        w.write("  ".repeat(depth));
        w.write("</");
        w.write(n.tag());
        w.write(">\n");
    }

    private static String escape(String v) {
        return v.replace("&", "&amp;").replace("\"", "&quot;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
