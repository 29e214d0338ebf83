package dev.gdasync.apps.hpgmg;

/**
 * A ghost region of a local box that lies outside the domain, where boundary conditions apply.
 *
 * @param box    local box index
 * @param normal the domain's normal for the region (upstream's subtype, 13 + di + 3dj + 9dk)
 * @param ilo    first ghost cell, box coordinates
 */
record BcRegion(int box, int normal, int ilo, int jlo, int klo, int dimI, int dimJ, int dimK) {
}
