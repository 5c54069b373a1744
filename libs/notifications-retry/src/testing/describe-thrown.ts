import { DeliveryError } from '../providers/errors/delivery.error';

/**
 * A thrown value as a violation message shows it: class and code, never the
 * message, which may hold the personal data a check is looking for.
 */
export function describeThrown(error: unknown): string {
  if (error instanceof DeliveryError) return `${error.constructor.name} (code "${error.code}")`;
  if (error instanceof Error) return `a plain ${error.constructor.name}`;
  return `a non-Error value (${error === null ? 'null' : typeof error})`;
}
