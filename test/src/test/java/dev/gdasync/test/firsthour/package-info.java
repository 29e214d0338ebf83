/**
 * A new user's first hour, as tests: the getting-started guide's programs compiled against the launcher jar alone
 * and run under the launcher, from the jars and as {@code scripts/mprun} runs it, and as {@code srun} and
 * {@code mpirun} start them; the guide and docs/features.md show those files verbatim; every link of the documentation
 * stays in the repository or goes to a public project.
 */
package dev.gdasync.test.firsthour;
