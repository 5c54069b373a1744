/**
 * Why a cycle stopped writing under its lease: a statement's fence found the
 * lease gone (expired, or taken over), or no pooled connection came before it
 * could run out, so any statement would have been fenced.
 */
export type LeaseLossCause = 'fence-refused' | 'no-connection-before-lease-end';
