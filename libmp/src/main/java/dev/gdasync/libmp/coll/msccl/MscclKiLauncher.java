package dev.gdasync.libmp.coll.msccl;

import dev.gdasync.gdsync.ki.KiTableExecutor;

import java.util.Objects;
import java.util.function.Consumer;

/**
 * What runs the KI form's launches ({@code MscclRuntime.*Ki}): the executor whose address map names the memory in
 * the prepared state, and the launch itself, which must return only when the launch ended (join it). libmp does not
 * depend on the executors, so the caller supplies the launch, e.g. for the host KI executor
 * {@code MscclKiLauncher.of(executor, l -> executor.msccl(l.table(), l.state(), l.program(), l.blocks(),
 * l.firstTile(), l.endTile()).join(timeout))}.
 */
public interface MscclKiLauncher {
    /** @return the executor the launches run on */
    dev.gdasync.gdsync.ki.KiTableExecutor executor();

    /**
     * Runs one launch and returns when it ended.
     *
     * @param launch the prepared launch
     * @throws RuntimeException if a block failed (the runtime reports it, naming the launch)
     */
    void launch(MscclKiLaunch launch);

    /**
     * @param executor what runs the launches
     * @param launch   runs one launch and joins it
     * @return the launcher
     */
    static MscclKiLauncher of(KiTableExecutor executor, Consumer<MscclKiLaunch> launch) {
        Objects.requireNonNull(executor, "executor must not be null");
        Objects.requireNonNull(launch, "launch must not be null");
        return new MscclKiLauncher() {
            @Override
            public KiTableExecutor executor() {
                return executor;
            }

            @Override
            public void launch(MscclKiLaunch l) {
                launch.accept(l);
            }
        };
    }
}
