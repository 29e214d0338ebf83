package dev.gdasync.gdsync.cuda;

import jcuda.driver.CUdevice;
import jcuda.driver.JCudaDriver;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The CUDA driver of this process, through JCuda: opened once, shared by every CUDA user of the JVM.
 *
 * <p>{@link #open()} first looks for {@code libcuda.so.1} with FFM ({@link DriverLibrary}), because the
 * first use of JCuda's {@code JCudaDriver} class on a machine without it throws
 * {@link UnsatisfiedLinkError} from a static initializer and leaves the class broken for the life of the
 * JVM. Only then does it load JCuda, switch JCuda's exceptions off
 * ({@link JCudaDriver#setExceptionsEnabled(boolean)}, a JVM-wide setting: this binding checks every
 * result code itself, through {@link CudaException#check}), check the driver's version, and call
 * {@code cuInit} and {@code cuDeviceGetCount}. The outcome, success or failure, is kept: a later
 * {@link #open()} returns the same driver or throws the same message.
 */
public final class CudaDriver {
    private static final Object LOCK = new Object();
    private static CudaDriver driver;
    private static String failure;
    private static int failureResult;

    private final int version;
    private final List<CudaDevice> devices;

    private CudaDriver(int version, List<CudaDevice> devices) {
        this.version = version;
        this.devices = devices;
    }

    /**
     * Opens the driver (once per JVM).
     *
     * @return the driver, with at least one device
     * @throws CudaException if {@code libcuda.so.1} is missing, the driver is too old or cannot start, or
     *                       no device is visible; the message says what to do
     */
    public static CudaDriver open() {
        synchronized (LOCK) {
            if (driver != null) {
                return driver;
            }
            if (failure == null) {
                try {
                    driver = load();
                    return driver;
                } catch (CudaException e) {
                    failure = e.getMessage();
                    failureResult = e.result();
                }
            }
            throw new CudaException(failure, failureResult);
        }
    }

    /**
     * Tells whether CUDA can be used here, without throwing: what tests and optional GPU paths ask first.
     *
     * @return why {@link #open()} fails, or empty when it succeeds
     */
    public static Optional<String> unavailableReason() {
        try {
            open();
            return Optional.empty();
        } catch (CudaException e) {
            return Optional.of(e.getMessage());
        }
    }

    private static CudaDriver load() {
        Optional<String> missing = DriverLibrary.problem(DriverLibrary.NAME);
        if (missing.isPresent()) {
            throw new CudaException(missing.get(), CudaException.NO_RESULT);
        }
        try {
            NativeLoadLock.run(() -> JCudaDriver.setExceptionsEnabled(false));
        } catch (LinkageError e) {
            // libcuda.so.1 is there, yet JCuda's native library did not load (another missing dependency,
            // an unwritable java.io.tmpdir, another architecture).
            throw new CudaException("JCuda's native driver library could not be loaded although " + DriverLibrary.NAME
                    + " was found: " + e.getMessage() + "; check java.io.tmpdir is writable and the machine is "
                    + "linux-x86_64", e);
        }
        int[] value = new int[1];
        CudaException.check(JCudaDriver.cuDriverGetVersion(value), "cuDriverGetVersion");
        int version = value[0];
        Optional<String> old = DriverVersion.tooOld(version);
        if (old.isPresent()) {
            throw new CudaException(old.get(), CudaException.NO_RESULT);
        }
        CudaException.check(JCudaDriver.cuInit(0), "cuInit");
        CudaException.check(JCudaDriver.cuDeviceGetCount(value), "cuDeviceGetCount");
        if (value[0] < 1) {
            throw new CudaException("cuDeviceGetCount found no CUDA device: check nvidia-smi and CUDA_VISIBLE_DEVICES",
                    CudaException.NO_RESULT);
        }
        List<CudaDevice> found = new ArrayList<>(value[0]);
        for (int i = 0; i < value[0]; i++) {
            found.add(CudaDevice.query(i));
        }
        return new CudaDriver(version, List.copyOf(found));
    }

    /** @return the driver's CUDA version, as {@code cuDriverGetVersion} gives it (for example 12040) */
    public int version() {
        return version;
    }

    /** @return the devices this process sees, by ordinal */
    public List<CudaDevice> devices() {
        return devices;
    }

    /**
     * @param ordinal a device ordinal
     * @return that device
     * @throws IllegalArgumentException if there is no such device
     */
    public CudaDevice device(int ordinal) {
        if (ordinal < 0 || ordinal >= devices.size()) {
            throw new IllegalArgumentException("CUDA device " + ordinal + " does not exist: this process sees "
                    + devices.size() + " device(s), 0.." + (devices.size() - 1) + " (check CUDA_VISIBLE_DEVICES)");
        }
        return devices.get(ordinal);
    }

    /**
     * @param ordinal a device ordinal
     * @return the driver's handle of that device
     */
    static CUdevice handle(int ordinal) {
        CUdevice device = new CUdevice();
        CudaException.check(JCudaDriver.cuDeviceGet(device, ordinal), "cuDeviceGet(" + ordinal + ")");
        return device;
    }

    @Override
    public String toString() {
        return "CUDA driver " + DriverVersion.format(version) + " with " + devices.size() + " device(s): "
                + String.join(", ", devices.stream().map(Objects::toString).toList());
    }
}
