/** The library in this app has no such operations service yet: the page says so, the API answers 503. */
export class ConsoleUnavailableError extends Error {
  constructor(readonly service: string) {
    super(`not available: this version of the library has no ${service}`);
    this.name = 'ConsoleUnavailableError';
  }
}
