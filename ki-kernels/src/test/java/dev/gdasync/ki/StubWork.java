package dev.gdasync.ki;

import dev.gdasync.ki.kernels.KiExchangeWork;

/** Exchange work that does nothing: tests override the steps they watch. */
public class StubWork implements KiExchangeWork {
    @Override
    public void pack(int sendIndex) {
    }

    @Override
    public int interiorChunks() {
        return 0;
    }

    @Override
    public void interior(int chunk) {
    }

    @Override
    public int unpackCount() {
        return 0;
    }

    @Override
    public void unpack(int index) {
    }
}
