import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';

/**
 * A page's position as an opaque string: base64url of `[scope, at, id]`, the
 * last row's sort key. `scope` names the list it belongs to (a state), so a
 * cursor handed to another list is refused instead of paging it from a
 * meaningless place. `at` keeps the database's microseconds (a JS Date keeps
 * milliseconds: rows a microsecond apart would be skipped or shown twice).
 */
export interface KeysetPosition {
  readonly at: string;
  readonly id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** As `keysetTimeSql` writes it: UTC, microseconds. */
const KEY_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const MAX_CURSOR_LENGTH = 300;

export function encodeCursor(scope: string, position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([scope, position.at, position.id])).toString('base64url');
}

/** The position of a cursor from `encodeCursor(scope, …)`; undefined for none. */
export function decodeCursor(
  scope: string,
  cursor: string | undefined,
): KeysetPosition | undefined {
  if (cursor === undefined) return undefined;
  const refuse = (why: string): never => {
    throw new InvalidOperationInputError('after', `${why}; got ${JSON.stringify(cursor)}`);
  };
  if (typeof cursor !== 'string' || cursor === '' || cursor.length > MAX_CURSOR_LENGTH) {
    return refuse('must be a cursor this list returned as next');
  }
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return refuse('is not a cursor this list returned as next');
  }
  if (
    !Array.isArray(decoded) ||
    decoded.length !== 3 ||
    typeof decoded[0] !== 'string' ||
    typeof decoded[1] !== 'string' ||
    typeof decoded[2] !== 'string' ||
    !KEY_TIME.test(decoded[1]) ||
    Number.isNaN(Date.parse(decoded[1])) ||
    !UUID.test(decoded[2])
  ) {
    return refuse('is not a cursor this list returned as next');
  }
  if (decoded[0] !== scope)
    return refuse(`is a cursor of another list (${decoded[0]}), not of ${scope}`);
  return { at: decoded[1], id: decoded[2].toLowerCase() };
}

/** The next cursor of a page: the last row's key when the page is full (more may follow), else null. */
export function nextCursor(
  scope: string,
  rows: ReadonlyArray<{ readonly keyAt: string; readonly keyId: string }>,
  limit: number,
): string | null {
  const last = rows[rows.length - 1];
  return rows.length < limit || !last
    ? null
    : encodeCursor(scope, { at: last.keyAt, id: last.keyId });
}
