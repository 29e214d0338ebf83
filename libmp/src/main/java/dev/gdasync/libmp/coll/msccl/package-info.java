/**
 * MSCCL-IR collective programs, from the XML to the runs. {@link dev.gdasync.libmp.coll.msccl.MscclRuntime} runs a
 * selected program's part of this rank, with the built-in collectives as the fallback; its parts:
 * <ul>
 *   <li>the programs: {@code MscclParser} and {@code MscclValidator} make an {@code MscclProgram} (its
 *       {@code Collective}, {@code StepType}s and {@code Buffer}s) within {@code MscclLimits};
 *       {@code MscclPrograms} loads and selects them, {@code AllPairsPrograms} and {@code TreePrograms} generate
 *       some;</li>
 *   <li>the calls: {@code Dispatcher} checks a call, agrees with the other ranks on what its kind resolves to
 *       ({@code CallRecord}, {@code PreparedCall}, kept per communicator in {@code CommCalls}) and runs it
 *       ({@code Trigger}: blocking, on a stream or from a KI executor), in the geometry of a {@code RunPlan};</li>
 *   <li>the host interpreter (blocking): {@code HostInterpreter} runs a {@code HostRun}'s thread blocks
 *       ({@code BlockRunner} on {@code BlockThreads}) over connections that are mapped memory ({@code HostArea},
 *       {@code DirectChannel}, {@code DirectPlacement}) or one-sided puts ({@code PutChannel}), each seen through a
 *       {@code SendLink} and a {@code RecvLink}; {@code StepKernel} is a step's data work on one tile;</li>
 *   <li>the stream interpreter (SA): {@code StreamInterpreter} runs a call on a host stream, its puts rung in the
 *       order {@code StreamSchedule} finds;</li>
 *   <li>the KI form: {@code KiInterpreter} prepares a launch ({@code MscclKiLaunch}) over a shmem KI state that an
 *       {@code MscclKiLauncher} runs;</li>
 *   <li>the kernel interpreter's table: {@code MscclDeviceTable} encodes a program in gdsync's
 *       {@code MscclTableLayout}, the format ki-kernels' CUDA kernel and its host mirrors read.</li>
 * </ul>
 *
 * <p>Layer: above {@code dev.gdasync.libmp} (Mp, registrations, windows, {@code Mp.peerMemory}), {@code coll}
 * (communicators and their typed built-ins), {@code coll.reduce}, {@code shmem} (the KI form's heap) and gdsync's
 * {@code memop}, {@code stream}, {@code concurrent} and {@code ki} (the table's layout), which it may call; it knows
 * no executor (ki-kernels is not a dependency of libmp). Applications call it. See {@code docs/msccl.md}.
 */
package dev.gdasync.libmp.coll.msccl;
