/** A bad environment variable, named with the value it had, so start-up fails with a fix in plain sight. */
export class InvalidEnvironmentVariableError extends Error {
  constructor(
    readonly variable: string,
    /** As shown in the message: already stripped of anything secret. */
    readonly shownValue: string,
    readonly requirement: string,
  ) {
    super(`Environment variable ${variable} ${requirement}; got ${shownValue}`);
    this.name = 'InvalidEnvironmentVariableError';
  }
}
