/** Resolved (defaulted, validated) options; inject this rather than the raw token. */
export const RESOLVED_NOTIFICATIONS_RETRY_OPTIONS = Symbol('RESOLVED_NOTIFICATIONS_RETRY_OPTIONS');
