package dev.gdasync.ki.cuda;

import jcuda.Pointer;

import java.util.ArrayList;
import java.util.List;

/**
 * The arguments of one kernel launch, checked against the kernel's signature and packed the way
 * {@code cuLaunchKernel} takes them: an array of pointers, one per parameter, each to a value of the
 * parameter's size ({@code Pointer.to(Pointer.to(int[]), Pointer.to(long[]), ...)}).
 */
final class KernelArgs {
    private final KernelAbi.Signature signature;
    private final long[] values;

    private KernelArgs(KernelAbi.Signature signature, long[] values) {
        this.signature = signature;
        this.values = values;
    }

    /**
     * @param signature the kernel
     * @param values    one per parameter, in order; U32 values must fit 32 unsigned bits, I32 values 32 signed
     *                  bits, pointers must be non-zero
     * @return the checked arguments
     * @throws IllegalArgumentException if the count or a value does not fit the signature
     */
    static KernelArgs of(KernelAbi.Signature signature, long... values) {
        List<KernelAbi.Param> params = signature.params();
        if (values.length != params.size()) {
            throw new IllegalArgumentException(signature.function() + " takes " + params.size() + " arguments "
                    + params.stream().map(KernelAbi.Param::name).toList() + ", got " + values.length);
        }
        for (int i = 0; i < values.length; i++) {
            KernelAbi.Param p = params.get(i);
            if (p.type() == KernelAbi.Type.U32 && (values[i] < 0 || values[i] > 0xFFFF_FFFFL)) {
                throw new IllegalArgumentException(signature.function() + " argument " + p.name()
                        + " is a uint32_t, got " + values[i]);
            }
            if (p.type() == KernelAbi.Type.I32 && (values[i] < Integer.MIN_VALUE || values[i] > Integer.MAX_VALUE)) {
                throw new IllegalArgumentException(signature.function() + " argument " + p.name()
                        + " is an int, got " + values[i]);
            }
            if (p.type() == KernelAbi.Type.POINTER && values[i] == 0) {
                throw new IllegalArgumentException(signature.function() + " argument " + p.name()
                        + " is a device address, got 0");
            }
        }
        return new KernelArgs(signature, values.clone());
    }

    /** @return the kernel */
    KernelAbi.Signature signature() {
        return signature;
    }

    /**
     * @param i a parameter index
     * @return its value (a U32 as its unsigned value)
     */
    long value(int i) {
        return values[i];
    }

    /**
     * @param i a parameter index
     * @return the bytes the kernel receives for it, little-endian, of the parameter's size
     */
    byte[] bytes(int i) {
        int n = signature.params().get(i).type().bytes();
        byte[] out = new byte[n];
        for (int b = 0; b < n; b++) {
            out[b] = (byte) (values[i] >>> (8 * b));
        }
        return out;
    }

    /** @return the {@code kernelParams} argument of {@code cuLaunchKernel} */
    Pointer pack() {
        List<Pointer> each = new ArrayList<>(values.length);
        for (int i = 0; i < values.length; i++) {
            each.add(switch (signature.params().get(i).type()) {
                case U32, I32 -> Pointer.to(new int[] {(int) values[i]});
                case U64, POINTER -> Pointer.to(new long[] {values[i]});
            });
        }
        return Pointer.to(each.toArray(new Pointer[0]));
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(signature.function()).append('(');
        for (int i = 0; i < values.length; i++) {
            KernelAbi.Param p = signature.params().get(i);
            s.append(i == 0 ? "" : ", ").append(p.name()).append('=')
                    .append(p.type() == KernelAbi.Type.POINTER ? "0x" + Long.toHexString(values[i]) : Long.toString(values[i]));
        }
        return s.append(')').toString();
    }
}
