package dev.gdasync.gdsync.mlx5.verbs;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * What {@code ibv_query_port} says of a port that connecting needs.
 *
 * @param state          an {@code IBV_PORT_*} state
 * @param activeMtu      the active MTU, an {@code IBV_MTU_*} value
 * @param gidTableLength GIDs in the port's table
 * @param lid            the port's LID (InfiniBand; 0 on RoCE)
 * @param linkLayer      an {@code IBV_LINK_LAYER_*} value
 */
record PortAttributes(int state, int activeMtu, int gidTableLength, int lid, int linkLayer) {

    /**
     * @param attr a filled {@link VerbsLayouts#IBV_PORT_ATTR}
     * @return the attributes
     */
    static PortAttributes read(MemorySegment attr) {
        return new PortAttributes(
                attr.get(JAVA_INT, VerbsLayouts.offset(VerbsLayouts.IBV_PORT_ATTR, "state")),
                attr.get(JAVA_INT, VerbsLayouts.offset(VerbsLayouts.IBV_PORT_ATTR, "active_mtu")),
                attr.get(JAVA_INT, VerbsLayouts.offset(VerbsLayouts.IBV_PORT_ATTR, "gid_tbl_len")),
                attr.get(JAVA_SHORT, VerbsLayouts.offset(VerbsLayouts.IBV_PORT_ATTR, "lid")) & 0xffff,
                attr.get(JAVA_BYTE, VerbsLayouts.offset(VerbsLayouts.IBV_PORT_ATTR, "link_layer")) & 0xff);
    }

    /** @return whether the port is Ethernet (RoCE): queue pairs address peers by GID */
    boolean isEthernet() {
        return linkLayer == VerbsConstants.IBV_LINK_LAYER_ETHERNET;
    }

    /** @return the link layer's name, for messages */
    String linkLayerName() {
        return isEthernet() ? "Ethernet (RoCE)" : "InfiniBand";
    }
}
