/** Too many wrong tokens from one client address: 429 with Retry-After, the token is not even compared. */
export class SignInLimitedError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`too many failed sign-in attempts: try again in ${retryAfterSeconds} s`);
    this.name = 'SignInLimitedError';
  }
}
