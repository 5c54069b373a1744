/** The host's database could not be reached when the CLI opened it; nothing was read or changed. */
export class OpsDatabaseUnreachableError extends Error {
  constructor(readonly causeText: string) {
    super(`the database is unreachable: ${causeText}`);
    this.name = 'OpsDatabaseUnreachableError';
  }
}
