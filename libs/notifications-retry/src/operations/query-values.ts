import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';

/**
 * Checks for the optional values of an operator's query: each throws an
 * InvalidOperationInputError naming the option and the value given, so that
 * a console or CLI can point at the field.
 */
const MAX_KEY_LENGTH = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A channel key, an error code, an actor: trimmed, non-empty, short. */
export function optionalText(
  option: string,
  value: unknown,
  maxLength = MAX_KEY_LENGTH,
): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '' || value.trim().length > maxLength) {
    throw new InvalidOperationInputError(
      option,
      `must be a non-empty text of at most ${maxLength} characters; got ${describe(value)}`,
    );
  }
  return value.trim();
}

export function optionalDate(option: string, value: unknown): Date | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new InvalidOperationInputError(
      option,
      `must be a valid date and time; got ${describe(value)}`,
    );
  }
  return value;
}

/** A notification or event id, lower-cased. */
export function optionalUuid(option: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return requiredUuid(option, value);
}

export function requiredUuid(option: string, value: unknown): string {
  if (typeof value !== 'string' || !UUID.test(value.trim())) {
    throw new InvalidOperationInputError(option, `must be a UUID; got ${describe(value)}`);
  }
  return value.trim().toLowerCase();
}

/** One of `allowed`, or undefined when absent. */
export function optionalChoice<T extends string>(
  option: string,
  value: unknown,
  allowed: readonly T[],
): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidOperationInputError(
      option,
      `must be one of ${allowed.join(', ')}; got ${describe(value)}`,
    );
  }
  return value as T;
}

function describe(value: unknown): string {
  if (value instanceof Date)
    return Number.isNaN(value.getTime()) ? 'an invalid date' : value.toISOString();
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

/** One of `allowed`; absent is refused like any other value. */
export function requiredChoice<T extends string>(
  option: string,
  value: unknown,
  allowed: readonly T[],
): T {
  const choice = optionalChoice(option, value, allowed);
  if (choice === undefined) {
    throw new InvalidOperationInputError(option, `is required: one of ${allowed.join(', ')}`);
  }
  return choice;
}
