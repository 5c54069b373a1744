/** A command line the ops CLI cannot act on; exits 2 before anything is read or changed. */
export class OpsArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpsArgumentError';
  }
}
