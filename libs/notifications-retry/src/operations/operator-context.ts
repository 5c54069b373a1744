import { InvalidOperationInputError } from '../errors/invalid-operation-input.error';

/** Who asks for a state change and why: both go into the audit table. */
export interface OperatorContext {
  /** The operator (a login, `cli:<user>`, `admin`); no e-mail address is needed. */
  readonly actor: string;
  readonly reason: string;
}

const MAX_ACTOR_LENGTH = 200;
const MAX_REASON_LENGTH = 500;

/** Trims and checks an operator context; an action without a reason is refused before anything changes. */
export function validateOperatorContext(context: OperatorContext): OperatorContext {
  const actor = typeof context.actor === 'string' ? context.actor.trim() : '';
  const reason = typeof context.reason === 'string' ? context.reason.trim() : '';
  if (reason === '' || reason.length > MAX_REASON_LENGTH) {
    throw new InvalidOperationInputError(
      'reason',
      `is required (why, for the audit): a non-empty text of at most ${MAX_REASON_LENGTH} characters`,
    );
  }
  if (actor === '' || actor.length > MAX_ACTOR_LENGTH) {
    throw new InvalidOperationInputError(
      'actor',
      `must be a non-empty name of at most ${MAX_ACTOR_LENGTH} characters`,
    );
  }
  return { actor, reason };
}
