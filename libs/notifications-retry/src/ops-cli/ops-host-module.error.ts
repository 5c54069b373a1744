/** The host's module, as built for the CLI, would not behave as a CLI must (it schedules cycles, runs the relay). */
export class OpsHostModuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpsHostModuleError';
  }
}
