/**
 * A recipient address as an operator may see it: enough to tell an e-mail from
 * a phone number or a device token and to spot an obviously broken one, never
 * enough to identify the person. An e-mail keeps the first character of its
 * local part and its top-level domain; anything else keeps its last two
 * characters when it is long enough to hide the rest. The length is not kept.
 */
export function maskAddress(address: string | null | undefined): string {
  if (!address) return '(none)';
  const trimmed = address.trim();
  const at = trimmed.lastIndexOf('@');
  if (at > 0 && at < trimmed.length - 1) {
    const domain = trimmed.slice(at + 1);
    const dot = domain.lastIndexOf('.');
    const tld = dot >= 0 && dot < domain.length - 1 ? domain.slice(dot) : '';
    return `${trimmed[0]}***@***${tld}`;
  }
  if (at === 0 || at === trimmed.length - 1) return '***@***';
  const prefix = trimmed.startsWith('+') ? '+' : '';
  return trimmed.length >= 10 ? `${prefix}***${trimmed.slice(-2)}` : `${prefix}***`;
}
