/** What `npm run ops` exits with, for scripts. */
export const OpsExitCode = {
  Ok: 0,
  /** Something went wrong (the database, an unexpected error). */
  Failure: 1,
  /** The command line (or the environment it reads) is wrong; nothing was done. */
  BadArguments: 2,
  /** Understood, but the current state does not allow it (a live lease, an unknown channel, a cycle skipped); nothing was done. */
  Refused: 3,
} as const;

export type OpsExitCode = (typeof OpsExitCode)[keyof typeof OpsExitCode];
