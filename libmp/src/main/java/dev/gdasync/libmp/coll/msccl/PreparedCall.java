package dev.gdasync.libmp.coll.msccl;

import java.util.Optional;

/**
 * What one kind of call resolved to when its members agreed on it (its first call): the record every later call of
 * the kind publishes, the program chosen (or the built-in), and, made by the first blocking run, the prepared run.
 * Later calls of the kind find it without any exchange with the other ranks.
 */
final class PreparedCall {
    final CallRecord record;
    final Optional<MscclProgram> program;
    /** The blocking run's blocks and connections, made by the first blocking call. */
    HostRun host;

    PreparedCall(CallRecord record, Optional<MscclProgram> program) {
        this.record = record;
        this.program = program;
    }
}
