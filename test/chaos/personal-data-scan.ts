import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import { SHARED_WORDING } from '../support/personal-data';
import type { SeededRow } from './chaos-database';
import { PERSONAL_DATA_ECHOES } from './personal-data-echoes';
import { PersonalDataNeedles, type NeedleHit, type PersonalField } from './personal-data-needles';

/** Where a run of seeded personal data turned up. */
export interface Leak {
  readonly location: string;
  /** The kind of source: logs, metrics, spans, other files, or the database column's label. */
  readonly source: string;
  /** Which decoding showed it (`raw`, `url-decoded`, `json-unescaped`, …). */
  readonly form: string;
  /** The run found, as it reads once decoded, cut to 24 characters. */
  readonly needle: string;
  /** Which seeded field it was, and whose when only one row has that run. */
  readonly field: string;
  /** The decoded text around it, cut to 40 characters either side. */
  readonly excerpt: string;
}

export interface ScanResult {
  /** The first leaks found (at most MAX_LEAKS). */
  readonly leaks: Leak[];
  /** Every leak: lines of files and database values with a run of seeded personal data. */
  readonly leakCount: number;
  /** Leaks per source, per field and per decoding form. */
  readonly leaksBySource: Record<string, number>;
  readonly leaksByField: Record<string, number>;
  readonly leaksByForm: Record<string, number>;
  /** Bytes searched per kind of source. */
  readonly scanned: Record<string, number>;
  /** Sources searched: files and database columns. */
  readonly sources: number;
  /** Distinct runs searched for. */
  readonly needles: number;
  /**
   * The scanner found what it must: every field of seeded rows in the
   * notifications table, and each transformed echo of one of them.
   */
  readonly selfCheck: boolean;
  /** What the self-check missed, when it failed. */
  readonly selfCheckMisses: string[];
}

const MAX_LEAKS = 1_000;

function describeField(hit: NeedleHit): string {
  if (hit.rowId) return `${hit.field} of ${hit.rowId}`;
  return hit.field === 'mixed'
    ? 'a run several fields share'
    : `${hit.field} (a run several rows share)`;
}

class LeakCollector {
  readonly leaks: Leak[] = [];
  count = 0;
  readonly bySource: Record<string, number> = {};
  readonly byField: Record<string, number> = {};
  readonly byForm: Record<string, number> = {};

  add(location: string, source: string, hit: NeedleHit): void {
    this.count++;
    this.bySource[source] = (this.bySource[source] ?? 0) + 1;
    this.byField[hit.field] = (this.byField[hit.field] ?? 0) + 1;
    this.byForm[hit.form] = (this.byForm[hit.form] ?? 0) + 1;
    if (this.leaks.length < MAX_LEAKS) {
      this.leaks.push({
        location,
        source,
        form: hit.form,
        needle: hit.run.slice(0, 24),
        field: describeField(hit),
        excerpt: hit.excerpt,
      });
    }
  }
}

const kindOf = (file: string): string =>
  file.endsWith('.metrics.prom')
    ? 'metrics'
    : file.endsWith('.spans.jsonl')
      ? 'spans'
      : file.endsWith('.log')
        ? 'logs'
        : 'other files';

/** The database columns that must hold no personal data: what leaves the service, and stored errors. */
const COLUMNS: ReadonlyArray<readonly [string, string, string]> = [
  ['outbox payload', 'notification_outbox', 'payload::text'],
  ['outbox headers', 'notification_outbox', 'headers::text'],
  ['outbox topic and key', 'notification_outbox', `topic || ' ' || message_key`],
  ['last_error_message', 'notifications', 'last_error_message'],
  ['last_error_code', 'notifications', 'last_error_code'],
  ['provider_message_id', 'notifications', 'provider_message_id'],
  ['attempt_history', 'notifications', 'attempt_history::text'],
];

/**
 * Searches everything the run produced for the seeded personal data: every
 * instance's stdout and stderr (pino JSON), its Prometheus registry dumps, its
 * spans, and in the database the outbox payloads and headers and the stored
 * error codes, messages, provider message ids and attempt histories. A leak is any run of 8 or
 * more characters of any seeded address, subject or body, matched ignoring
 * case, in the text as written or once URL-decoded and JSON-unescaped (see
 * PersonalDataNeedles). Files are searched line by line.
 */
export async function scanForPersonalData(
  client: Client,
  outDir: string,
  seeded: readonly SeededRow[],
): Promise<ScanResult> {
  const needles = new PersonalDataNeedles(seeded, SHARED_WORDING);
  const found = new LeakCollector();
  const scanned: Record<string, number> = {};
  let sources = 0;

  for (const name of readdirSync(outDir).sort()) {
    const file = join(outDir, name);
    if (!statSync(file).isFile()) continue;
    const text = readFileSync(file, 'utf8');
    const kind = kindOf(name);
    scanned[kind] = (scanned[kind] ?? 0) + Buffer.byteLength(text);
    sources++;
    text.split('\n').forEach((line, i) => {
      const hit = needles.find(line);
      if (hit) found.add(`${name}:${i + 1}`, kind, hit);
    });
  }

  for (const [label, table, expression] of COLUMNS) {
    const { rows } = await client.query<{ id: string; value: string | null }>(
      `SELECT id::text AS id, ${expression} AS value FROM ${table}`,
    );
    sources++;
    for (const row of rows) {
      if (row.value === null) continue;
      scanned['database columns'] =
        (scanned['database columns'] ?? 0) + Buffer.byteLength(row.value);
      const hit = needles.find(row.value);
      if (hit) found.add(`${table}.${label} of row ${row.id}`, label, hit);
    }
  }

  const selfCheckMisses = await selfCheck(client, needles, seeded);
  return {
    leaks: found.leaks,
    leakCount: found.count,
    leaksBySource: found.bySource,
    leaksByField: found.byField,
    leaksByForm: found.byForm,
    scanned,
    sources,
    needles: needles.size,
    selfCheck: selfCheckMisses.length === 0,
    selfCheckMisses,
  };
}

/**
 * The scanner must be able to see a leak. The notifications table holds every
 * value: one row per channel, each field on its own, must be found and put down
 * to that row and field. And every transformed echo the fault-injecting
 * adapter writes, inside a JSON log line as pino would write it, must be found.
 */
async function selfCheck(
  client: Client,
  needles: PersonalDataNeedles,
  seeded: readonly SeededRow[],
): Promise<string[]> {
  const misses: string[] = [];
  const { rows } = await client.query<{
    id: string;
    recipient_address: string;
    subject: string | null;
    body: string;
  }>(
    `SELECT DISTINCT ON (channel) id::text AS id, recipient_address, subject, body
       FROM notifications ORDER BY channel, id`,
  );
  if (rows.length === 0) misses.push('the notifications table is empty');
  for (const row of rows) {
    for (const field of [
      'recipient_address',
      'subject',
      'body',
    ] as const satisfies readonly PersonalField[]) {
      const hit = needles.find(row[field] ?? '');
      if (!hit || hit.field !== field || hit.rowId !== row.id)
        misses.push(`${field} of ${row.id} in the notifications table`);
    }
  }
  const sample = seeded[0];
  if (sample) {
    for (const [name, echo] of Object.entries(PERSONAL_DATA_ECHOES)) {
      const line = JSON.stringify({
        level: 30,
        msg: 'item-retried',
        error: `upstream: ${echo(sample)}`,
      });
      if (!needles.find(line)) misses.push(`the ${name} echo of ${sample.id} in a log line`);
    }
  }
  return misses;
}
