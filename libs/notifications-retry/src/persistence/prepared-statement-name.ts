import { createHash } from 'node:crypto';

const names = new Map<string, string>();

/**
 * A stable name per SQL text, so the same text is the same named prepared
 * statement on every connection: `pg` parses and plans it once per connection,
 * then only binds and executes it. Names are a hash of the text (two texts can
 * never share a name, which `pg` would refuse). The map grows with the number
 * of distinct texts, which is fixed: values are never part of the text.
 */
export function preparedStatementName(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    name = `notifications_retry_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    names.set(sql, name);
  }
  return name;
}
