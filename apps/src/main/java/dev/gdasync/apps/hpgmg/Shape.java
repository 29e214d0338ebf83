package dev.gdasync.apps.hpgmg;

/** Upstream's stencil shapes: which of the 26 neighbor regions a ghost-zone exchange or a boundary condition covers. */
enum Shape {
    BOX, STAR, NO_CORNERS;

    static final int[] FACES = {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0};
    static final int[] EDGES = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
    static final int[] CORNERS = {1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 1};

    /** @return whether an exchange of this shape communicates direction {@code dir} (13 + di + 3dj + 9dk) */
    boolean communicates(int dir) {
        return switch (this) {
            case BOX -> FACES[dir] + EDGES[dir] + CORNERS[dir] > 0;
            case STAR -> FACES[dir] > 0;
            case NO_CORNERS -> FACES[dir] + EDGES[dir] > 0;
        };
    }
}
