import { createHash } from 'node:crypto';

/**
 * A UUID derived from a name, so the demo rows have the same ids on every run:
 * seeding twice inserts nothing new, and the demo provider's hash-driven
 * outcomes repeat from run to run. Version 8 ("custom") per RFC 9562, because
 * the bits come from SHA-256 rather than the SHA-1 of version 5.
 */
export function demoUuid(name: string): string {
  const bytes = createHash('sha256')
    .update(`pin-notifications-demo:${name}`)
    .digest()
    .subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x80;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
