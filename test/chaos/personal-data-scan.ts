import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from 'pg';
import type { SeededRow } from './chaos-database';

/** Where a seeded personal value turned up. */
export interface Leak {
  readonly location: string;
  /** What matched: the run's marker, a fragment of the values, or a whole seeded value. */
  readonly needle: string;
  /** Which seeded field it was, when it could be told. */
  readonly field: string | null;
}

export interface ScanResult {
  readonly leaks: Leak[];
  /** Bytes searched per kind of source. */
  readonly scanned: Record<string, number>;
  /** Sources searched: files and database columns. */
  readonly sources: number;
  /** The scanner found the marker where it must be (the notifications table): it can see a leak. */
  readonly selfCheck: boolean;
}

/**
 * Pieces of the seeded values (test/support/personal-data.ts) that no log line,
 * metric, span or event has any reason to contain; matched ignoring case.
 */
const FRAGMENTS = [
  'Amelie',
  'Durand',
  'Jonas',
  'Kowalski',
  'Priya',
  'Raman',
  'Tomasz',
  'Nowak',
  'Chloe',
  'Martinez',
  'Mateo',
  'Silvestri',
  '7700 9',
  'one-time code',
  'Private statement',
  'example.net',
];

const MAX_LEAKS = 50;

function classify(
  text: string,
  index: number,
  marker: string,
  seeded: readonly SeededRow[],
): string | null {
  // Every seeded value carries the marker, so a hit sits inside one of them: find which.
  const window = text.slice(Math.max(0, index - 200), index + 200);
  for (const row of seeded) {
    if (window.includes(row.recipientAddress)) return `recipient_address of ${row.id}`;
    if (window.includes(row.subject)) return `subject of ${row.id}`;
    if (window.includes(row.body)) return `body of ${row.id}`;
  }
  return window.includes(marker) ? 'part of a seeded value' : null;
}

function searchText(
  text: string,
  location: (index: number) => string,
  marker: string,
  seeded: readonly SeededRow[],
  leaks: Leak[],
): void {
  if (leaks.length >= MAX_LEAKS) return;
  let index = text.indexOf(marker);
  while (index !== -1 && leaks.length < MAX_LEAKS) {
    leaks.push({
      location: location(index),
      needle: 'marker',
      field: classify(text, index, marker, seeded),
    });
    index = text.indexOf(marker, index + marker.length);
  }
  const lower = text.toLowerCase();
  for (const fragment of FRAGMENTS) {
    const at = lower.indexOf(fragment.toLowerCase());
    if (at !== -1 && leaks.length < MAX_LEAKS)
      leaks.push({ location: location(at), needle: fragment, field: null });
  }
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/**
 * Searches everything the run produced for the seeded personal data: every
 * instance's stdout and stderr (pino JSON), its Prometheus registry dumps, its
 * spans, and in the database the outbox payloads and headers and the stored
 * error codes and messages. Every seeded address, subject and body contains the
 * run's marker (letters g–z, which no id or hex string holds), so searching for
 * the marker finds any of them, whole or in part; names and other fragments of
 * the values are searched for as well.
 */
export async function scanForPersonalData(
  client: Client,
  outDir: string,
  marker: string,
  seeded: readonly SeededRow[],
): Promise<ScanResult> {
  const leaks: Leak[] = [];
  const scanned: Record<string, number> = {};
  let sources = 0;
  const kindOf = (file: string): string =>
    file.endsWith('.metrics.prom')
      ? 'metrics'
      : file.endsWith('.spans.jsonl')
        ? 'spans'
        : file.endsWith('.log')
          ? 'logs'
          : 'other files';

  for (const name of readdirSync(outDir).sort()) {
    const file = join(outDir, name);
    if (!statSync(file).isFile()) continue;
    const text = readFileSync(file, 'utf8');
    const kind = kindOf(name);
    scanned[kind] = (scanned[kind] ?? 0) + Buffer.byteLength(text);
    sources++;
    searchText(text, (i) => `${name}:${lineOf(text, i)}`, marker, seeded, leaks);
  }

  const columns: ReadonlyArray<readonly [string, string, string]> = [
    ['outbox payload', 'notification_outbox', 'payload::text'],
    ['outbox headers', 'notification_outbox', 'headers::text'],
    ['outbox topic and key', 'notification_outbox', `topic || ' ' || message_key`],
    ['last_error_message', 'notifications', 'last_error_message'],
    ['last_error_code', 'notifications', 'last_error_code'],
    ['provider_message_id', 'notifications', 'provider_message_id'],
  ];
  for (const [label, table, expression] of columns) {
    const { rows } = await client.query<{ id: string; value: string | null }>(
      `SELECT id::text AS id, ${expression} AS value FROM ${table}`,
    );
    sources++;
    for (const row of rows) {
      if (row.value === null) continue;
      scanned['database columns'] =
        (scanned['database columns'] ?? 0) + Buffer.byteLength(row.value);
      searchText(row.value, () => `${table}.${label} of row ${row.id}`, marker, seeded, leaks);
    }
  }

  // The scanner must be able to see a leak: the notifications table itself holds every value.
  const { rows: control } = await client.query<{ text: string }>(
    `SELECT recipient_address || ' ' || coalesce(subject, '') || ' ' || body AS text
       FROM notifications ORDER BY id LIMIT 1`,
  );
  const probe: Leak[] = [];
  searchText(control[0]?.text ?? '', () => 'control', marker, seeded, probe);
  const selfCheck = probe.some((l) => l.needle === 'marker' && l.field !== null);

  return { leaks, scanned, sources, selfCheck };
}
