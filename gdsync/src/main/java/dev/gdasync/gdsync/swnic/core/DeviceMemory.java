package dev.gdasync.gdsync.swnic.core;

/**
 * Device memory of a peer as the executing process reaches it: the address of its first byte here,
 * and whether a copy may still use it. Checked under the copy lock ({@code cudaipc.DeviceCopyLock}) before every copy.
 */
public interface DeviceMemory {
    /** A peer region that cannot be mapped here (CUDA IPC failed, or no CUDA in this process). */
    DeviceMemory UNREACHABLE = new DeviceMemory() {
        @Override
        public long base() {
            return 0;
        }

        @Override
        public long length() {
            return 0;
        }

        @Override
        public boolean isUsable() {
            return false;
        }

        @Override
        public String toString() {
            return "unreachable device memory";
        }
    };

    /** @return the address of the region's first byte in this process */
    long base();

    /** @return the region's length */
    long length();

    /** @return whether copies may still use the memory (it is mapped, and its owner has not begun to free it) */
    boolean isUsable();
}
