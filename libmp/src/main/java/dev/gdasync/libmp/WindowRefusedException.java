package dev.gdasync.libmp;

/**
 * {@link Mp#windowCreate} failed on every rank because one rank could not register its buffer: thrown on the other
 * ranks (that rank throws its own registration error). No window exists anywhere; the ranks stay in step.
 */
public final class WindowRefusedException extends IllegalStateException {
    private final int rank;

    /**
     * @param rank the rank whose registration failed
     */
    public WindowRefusedException(int rank) {
        super("windowCreate: rank " + rank + " could not register its buffer (its own exception says why); no window "
                + "was created");
        this.rank = rank;
    }

    /** @return the rank whose registration failed */
    public int rank() {
        return rank;
    }
}
