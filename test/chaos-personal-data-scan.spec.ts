import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { installChaosSchema, seedNotifications, type SeededRow } from './chaos/chaos-database';
import { PERSONAL_DATA_ECHOES } from './chaos/personal-data-echoes';
import {
  decodedForms,
  PersonalDataNeedles,
  type SeededPersonalValues,
} from './chaos/personal-data-needles';
import { scanForPersonalData } from './chaos/personal-data-scan';
import {
  personalMarker,
  personalValues,
  SHARED_WORDING,
  type AddressKind,
} from './support/personal-data';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

/** A log line as pino writes it, with `text` in its error field. */
const logLine = (text: string): string =>
  JSON.stringify({
    level: 40,
    time: 1_767_225_600_123,
    pid: 4242,
    msg: 'item-retried',
    event: 'item-retried',
    runId: randomUUID(),
    notificationId: randomUUID(),
    error: text,
  });

/** An 8-character run crossing the quote before the code: only decoding can rebuild it. */
function transformedRun(row: SeededPersonalValues): string {
  const start = row.body.indexOf('"') - 2;
  const run = row.body.slice(start, start + 8);
  return encodeURIComponent(JSON.stringify(run.toUpperCase()));
}

describe('personal-data needles', () => {
  const marker = personalMarker(12);
  const kinds: AddressKind[] = ['email', 'phone', 'push-token'];
  const values: SeededPersonalValues[] = Array.from({ length: 30 }, (_, n) => ({
    id: randomUUID(),
    ...personalValues(marker, n, kinds[n % 3], { escapableBody: true }),
  }));
  const needles = new PersonalDataNeedles(values, SHARED_WORDING);

  it('finds an upper-cased, JSON-escaped, URL-encoded 8-character run of a body and names its row', () => {
    const row = values[7];
    const encoded = transformedRun(row);
    expect(encoded).toMatch(/%5C%22/); // the quote, JSON-escaped, then URL-encoded
    const hit = needles.find(logLine(`upstream said ${encoded}`));
    expect(hit).toMatchObject({ field: 'body', rowId: row.id, run: expect.any(String) as string });
    expect(hit?.form).toContain('url-decoded');
    expect(hit?.form).toContain('json-unescaped');
    expect(hit?.run).toHaveLength(8);
  });

  it('does not count a run of 7 characters', () => {
    const row = values[7];
    const start = row.body.indexOf('"') - 2;
    expect(needles.find(logLine(row.body.slice(start, start + 7)))).toBeNull();
  });

  it.each(Object.keys(PERSONAL_DATA_ECHOES) as Array<keyof typeof PERSONAL_DATA_ECHOES>)(
    'finds the %s echo of every kind of address',
    (echo) => {
      for (const row of values.slice(0, 3)) {
        const hit = needles.find(logLine(`provider: ${PERSONAL_DATA_ECHOES[echo](row)}`));
        expect(hit).not.toBeNull();
      }
    },
  );

  it('ignores the templates’ shared wording and ordinary log, metric and database text', () => {
    const ordinary = [
      logLine('canceling statement due to statement timeout'),
      logLine('prepared statement "s1" does not exist'),
      logLine('your one-time code is'),
      logLine(' and your balance is 1234.56 EUR'),
      logLine(
        'Connection terminated unexpectedly; terminating connection due to administrator command',
      ),
      'notifications_retry_provider_call_duration_ms_bucket{le="500",channel="email",provider="chaos-email"} 1234',
      '# HELP process_cpu_user_seconds_total Total user CPU time spent in seconds.',
      JSON.stringify({ name: 'notifications.retry.provider.send', traceId: 'a'.repeat(32) }),
    ];
    for (const line of ordinary) expect(needles.find(line)).toBeNull();
  });

  it('finds nothing in 20,000 lines of ids, timestamps and numbers', () => {
    const lines = Array.from({ length: 20_000 }, (_, i) =>
      logLine(
        `cycle ${i} took ${(i * 7.31).toFixed(2)} ms at ${new Date(1_767_225_600_000 + i * 997).toISOString()} ` +
          `(${randomUUID()}, +${i * 13}%, chaos-${randomUUID().slice(0, 8)}-${i % 5})`,
      ),
    );
    expect(lines.filter((line) => needles.find(line) !== null)).toEqual([]);
  });

  it('decodes JSON escapes and percent-encoding, several layers deep', () => {
    const nested = encodeURIComponent(JSON.stringify(JSON.stringify('a "b"\nc@d')));
    const forms = decodedForms(nested);
    expect(forms.some((f) => f.text.includes('a "b"\nc@d'))).toBe(true);
    expect(forms[0]).toEqual({ form: 'raw', text: nested });
  });
});

describe('scanForPersonalData (real PostgreSQL)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let client: Client;
  let seeded: SeededRow[];
  let outDir: string;
  const marker = personalMarker(12);

  beforeAll(async () => {
    ({ db, dataSource } = await createMigratedDatabase());
    client = new Client({ connectionString: db.url });
    await client.connect();
    await installChaosSchema(client);
  });

  afterAll(async () => {
    await client?.end();
    await dataSource?.destroy();
    await db?.drop();
  });

  beforeEach(async () => {
    await client.query('TRUNCATE notifications, notification_outbox');
    seeded = await seedNotifications(client, { rows: 30, seed: 3, marker, spreadMs: 1_000 });
    outDir = mkdtempSync(join(tmpdir(), 'chaos-scan-'));
    writeFileSync(
      join(outDir, 'chaos-worker-i1-g1.stdout.log'),
      [logLine('retry-cycle-started'), logLine('provider call exceeded 300 ms')].join('\n'),
    );
  });

  afterEach(() => rmSync(outDir, { recursive: true, force: true }));

  it('finds nothing in a clean run, and its self-check finds every seeded field', async () => {
    const result = await scanForPersonalData(client, outDir, seeded);
    expect(result.selfCheckMisses).toEqual([]);
    expect(result.selfCheck).toBe(true);
    expect(result.leaks).toEqual([]);
    expect(result.leakCount).toBe(0);
  });

  it('finds a transformed 8-character run in a log file and names the file, the line and the row', async () => {
    const row = seeded[4];
    writeFileSync(
      join(outDir, 'chaos-worker-i2-g3.stdout.log'),
      [logLine('retry-cycle-started'), logLine(`upstream said ${transformedRun(row)}`)].join('\n'),
    );
    const result = await scanForPersonalData(client, outDir, seeded);
    expect(result.leakCount).toBe(1);
    expect(result.leaks[0]).toMatchObject({
      location: 'chaos-worker-i2-g3.stdout.log:2',
      source: 'logs',
      field: `body of ${row.id}`,
    });
  });

  it('finds a push token stored as an error code, and a JSON-escaped body in an outbox payload', async () => {
    const push = seeded.find((r) => r.channel === 'push') as SeededRow;
    const email = seeded.find((r) => r.channel === 'email') as SeededRow;
    await client.query(`UPDATE notifications SET last_error_code = $2 WHERE id = $1`, [
      push.id,
      PERSONAL_DATA_ECHOES.addressAsCode(push),
    ]);
    await client.query(
      `INSERT INTO notification_outbox (topic, message_key, contract_version, payload)
       VALUES ('notifications.dispatched', $1, 1, jsonb_build_object('errorMessage', $2::text))`,
      [email.id, PERSONAL_DATA_ECHOES.jsonEscapedBody(email)],
    );
    const result = await scanForPersonalData(client, outDir, seeded);
    expect(result.leaksBySource).toEqual({ last_error_code: 1, 'outbox payload': 1 });
    expect(result.leaks.map((l) => l.field).sort()).toEqual(
      [`body of ${email.id}`, `recipient_address of ${push.id}`].sort(),
    );
  });

  it('fails its self-check when it cannot find the values the notifications table holds', async () => {
    const others = await seedNotifications(client, {
      rows: 3,
      seed: 4,
      marker: personalMarker(12),
      spreadMs: 0,
    });
    await client.query('DELETE FROM notifications WHERE NOT (id = ANY($1::uuid[]))', [
      others.map((r) => r.id),
    ]);
    const result = await scanForPersonalData(client, outDir, seeded);
    expect(result.selfCheck).toBe(false);
    expect(result.selfCheckMisses).toHaveLength(9);
  });
});
