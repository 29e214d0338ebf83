package dev.gdasync.libmp.coll.msccl;

/**
 * An MSCCL-IR file that cannot be run: malformed XML, a missing or bad attribute, or a program that breaks a rule
 * or a limit. The message names the file, the line where known, and the gpu, thread block and step.
 */
public final class MscclFormatException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what is wrong and where
     */
    public MscclFormatException(String message) {
        super(message);
    }

    /**
     * @param message what is wrong and where
     * @param cause   the parser's exception
     */
    public MscclFormatException(String message, Throwable cause) {
        super(message, cause);
    }
}
