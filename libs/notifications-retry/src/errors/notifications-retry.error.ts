/**
 * Base of every error the library throws on purpose, so a host can tell ours
 * from a driver's or its own with one `instanceof`.
 */
export abstract class NotificationsRetryError extends Error {
  abstract readonly code: string;

  protected constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}
