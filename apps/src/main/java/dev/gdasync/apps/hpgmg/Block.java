package dev.gdasync.apps.hpgmg;

/**
 * One block copy of upstream's communicator lists: a region read from a box (or a message buffer) and
 * written to a box (or a message buffer). A box side names a local box; a buffer side names an array and
 * the region's first element in it, with strides {@code dimI} and {@code dimI*dimJ} of the buffer region.
 */
final class Block {
    final int dimI;
    final int dimJ;
    final int dimK;
    final int readBox;
    final double[] readBuf;
    final int readI;
    final int readJ;
    final int readK;
    final int writeBox;
    final double[] writeBuf;
    final int writeI;
    final int writeJ;
    final int writeK;

    Block(int dimI, int dimJ, int dimK, int readBox, double[] readBuf, int readI, int readJ, int readK,
          int writeBox, double[] writeBuf, int writeI, int writeJ, int writeK) {
        this.dimI = dimI;
        this.dimJ = dimJ;
        this.dimK = dimK;
        this.readBox = readBox;
        this.readBuf = readBuf;
        this.readI = readI;
        this.readJ = readJ;
        this.readK = readK;
        this.writeBox = writeBox;
        this.writeBuf = writeBuf;
        this.writeI = writeI;
        this.writeJ = writeJ;
        this.writeK = writeK;
    }
}
