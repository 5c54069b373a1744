/**
 * `npm run chaos [-- --rows 10000 ...]`: the chaos run of issue 6. Seeds a
 * scratch database, starts several instances of the host app with a
 * fault-injecting provider as separate processes, SIGKILLs, SIGTERMs and cuts
 * their database connections while they work, SIGSTOPs the lease owner past its
 * TTL and lets it run on (issue 10), then checks the guarantees of
 * DESIGN.md §7 and searches everything the run produced for the seeded personal
 * data. Prints a table of figures and PASS/FAIL per invariant; exits non-zero
 * on any failure. `test/chaos.spec.ts` runs the same at a small size.
 */
import 'reflect-metadata';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { createScratchDatabase } from '../../src/database/scratch-database';
import { compiledCopy } from '../support/compiled-copy';
import { addStream, consumeStream, startNatsServer } from '../support/nats-server';
import { personalMarker } from '../support/personal-data';
import { CHAOS_CHANNELS, CHAOS_LOCK_KEY, CHAOS_STREAM, CHAOS_WORKER } from './chaos-config';
import {
  installChaosSchema,
  insertChaosChannels,
  migrate,
  seedNotifications,
  type SeededRow,
} from './chaos-database';
import type { CrashEvent, SigstopRecord, SigtermRecord, UnexpectedExit } from './chaos-events';
import { killGroupCommits } from './group-commit-kill';
import { checkInvariants, type DuplicateFigures, type InvariantResult } from './chaos-invariants';
import { parseChaosOptions, type ChaosOptions } from './chaos-options';
import { FAULT_SHARES, NON_RETRIABLE_CODES, seededRandom } from './fault-plan';
import { InstanceSupervisor, type ChaosInstance } from './instance-supervisor';
import { checkEveryEventPublishedOnce } from './outbox-invariants';
import { scanForPersonalData, type ScanResult } from './personal-data-scan';

export interface ChaosResult {
  readonly passed: boolean;
  readonly invariants: InvariantResult[];
  readonly figures: ReadonlyArray<readonly [string, string]>;
  readonly scan: ScanResult;
  readonly crashes: readonly CrashEvent[];
  readonly sigterms: readonly SigtermRecord[];
  readonly sigstops: readonly SigstopRecord[];
  readonly unexpectedExits: readonly UnexpectedExit[];
  /** The settle margin the instances ran with; null when the library has no such option. */
  readonly settleMarginMs: number;
  readonly outDir: string;
  readonly report: string;
}

type EmbeddedModule = typeof import('../../src/database/embedded-postgres');

const TICK_MS = 200;
const REPO_ROOT = resolve(__dirname, '..', '..');
/** What an instance imports: the library, the host app, the database helpers and the chaos harness. */
const INSTANCE_SOURCES = ['libs', 'src', 'apps', 'test/chaos', 'test/support'];
/** How long the run waits, once every row is final, for the relays to publish the last events. */
const OUTBOX_DRAIN_CAP_MS = 30_000;
const PROGRESS_EVERY_MS = 5_000;
/** The first SIGSTOP waits this long, so that cycles have begun, then goes to the first live lease owner. */
const FIRST_SIGSTOP_AFTER_MS = 1_500;

function progress(line: string): void {
  process.stderr.write(`[chaos] ${line}\n`);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * One chaos run. The database server is `serverUrl` when given (the jest
 * suite's), else DATABASE_URL's, else an embedded PostgreSQL started for the run.
 */
export async function runChaos(
  options: ChaosOptions,
  log: (line: string) => void = progress,
  server: string | undefined = process.env.DATABASE_URL,
): Promise<ChaosResult> {
  mkdirSync(options.outDir, { recursive: true });
  const cleanups: Array<() => Promise<unknown>> = [];
  try {
    let serverUrl = server;
    if (!serverUrl) {
      log('starting embedded PostgreSQL');
      // Required only here: the package is an ES module (jest cannot load it; Node's require can)
      // and installs process-wide exit handlers.
      const { startEmbeddedPostgres } =
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('../../src/database/embedded-postgres') as EmbeddedModule;
      const embedded = await startEmbeddedPostgres({ fast: true });
      cleanups.push(() => embedded.stop());
      serverUrl = embedded.url;
    }
    const db = await createScratchDatabase(serverUrl, 'chaos');
    if (!options.keepDatabase) cleanups.push(() => db.drop());
    log(`database ${db.name}; output in ${options.outDir}`);
    await migrate(db.url);
    const client = new Client({ connectionString: db.url, application_name: 'chaos-runner' });
    await client.connect();
    cleanups.push(() => client.end());
    await installChaosSchema(client);
    await insertChaosChannels(client);
    const marker = personalMarker(12);
    const seeded = await seedNotifications(client, {
      rows: options.rows,
      seed: options.seed,
      marker,
      spreadMs: options.spreadMs,
    });
    log(`seeded ${seeded.length} notifications`);
    // The instances relay the outbox to a nats-server of the run's own (never the machine's 4222).
    const nats = await startNatsServer();
    cleanups.push(() => nats.stop());
    await addStream(nats.url, CHAOS_STREAM, ['pin.notifications.dispatched.v1']);
    // Compiled once: an instance started under ts-node compiled every file again, 3 to 4 s on an
    // idle machine and past 11 s on a loaded one, longer than the run's own SIGKILL interval.
    const compiled = compiledCopy(REPO_ROOT, INSTANCE_SOURCES);
    cleanups.push(async () => compiled.remove());
    const supervisor = new InstanceSupervisor({
      outDir: options.outDir,
      program: {
        script: compiled.file('test/chaos/chaos-instance.ts'),
        tsconfig: compiled.tsconfig,
      },
      config: {
        databaseUrl: db.url,
        seed: options.seed,
        concurrency: options.concurrency,
        batchSize: options.batchSize,
        natsUrl: nats.url,
      },
    });
    // Before the copy goes: a run that failed half-way leaves its instances running, and one that
    // exits then would be restarted from a script no longer there, again and again.
    cleanups.push(() => supervisor.close());
    return await chaos(options, db.url, nats.url, client, seeded, supervisor, log);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

async function chaos(
  options: ChaosOptions,
  databaseUrl: string,
  natsUrl: string,
  client: Client,
  seeded: readonly SeededRow[],
  supervisor: InstanceSupervisor,
  log: (line: string) => void,
): Promise<ChaosResult> {
  const random = seededRandom(options.seed);
  const settleMarginMs = CHAOS_WORKER.settleMarginMs;
  const crashes: CrashEvent[] = [];
  const sigterms: SigtermRecord[] = [];
  const unexpectedExits: UnexpectedExit[] = [];
  // SIGSTOPs, with the instance and its lease-lost count at SIGCONT, completed once all have stopped.
  const stops: Array<{
    record: Omit<SigstopRecord, 'leaseLostAfterResume'>;
    instance: ChaosInstance;
    leaseLostAtResume: number;
  }> = [];
  let stopping = false;
  let terminatedBackends = 0;
  let groupCommitKillRunning = false;
  const pending = new Set<Promise<void>>();
  const dbNow = async (): Promise<Date> =>
    (await client.query<{ at: Date }>('SELECT clock_timestamp() AS at')).rows[0].at;

  const start = (slot: number): ChaosInstance => {
    const instance = supervisor.start(slot);
    void instance.exited.then((exit) => {
      if (instance.stopping === null && !stopping && !supervisor.closed) {
        unexpectedExits.push({
          instanceId: instance.instanceId,
          ...exit,
          lastError: instance.lastError,
        });
        log(
          `${instance.instanceId} exited unasked (code ${exit.code}, signal ${exit.signal}); restarting`,
        );
        start(slot);
      }
    });
    return instance;
  };
  const track = (work: Promise<void>): void => {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };
  // A SIGSTOPped instance is no candidate for any other fault until it runs again.
  const ready = (): ChaosInstance[] =>
    supervisor.running().filter((i) => i.ready && i.stopping === null && !i.paused);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const jittered = (mean: number): number => mean * (0.5 + random());

  const runStarted = performance.now();
  for (let slot = 1; slot <= options.instances; slot++) start(slot);
  let nextKill = runStarted + jittered(options.killEveryMs);
  let nextTerminate = runStarted + jittered(options.terminateEveryMs);
  let nextGroupCommitKill = runStarted + jittered(options.groupCommitKillEveryMs);
  let sigtermsSent = 0;
  // The first SIGTERM goes to the first instance seen working; later ones are spread out.
  let nextSigterm = runStarted;
  let sigstopsSent = 0;
  let sigstopInProgress = false;
  let nextSigstop = runStarted + FIRST_SIGSTOP_AFTER_MS;
  let nextProgress = runStarted + PROGRESS_EVERY_MS;
  let nextOpenCheck = runStarted;
  let timedOut = false;
  let open = seeded.length;

  for (;;) {
    await sleep(TICK_MS);
    const now = performance.now();
    if (now - runStarted > options.maxDurationS * 1000) {
      timedOut = true;
      log(`time cap of ${options.maxDurationS} s reached with ${open} rows open`);
      break;
    }
    if (now >= nextOpenCheck) {
      nextOpenCheck = now + 1_000;
      open = (
        await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM notifications
            WHERE NOT (status = 'Sent' OR (status = 'Failed' AND next_attempt_at IS NULL))`,
        )
      ).rows[0].n;
      if (open === 0) break;
    }
    if (now >= nextProgress) {
      nextProgress = now + PROGRESS_EVERY_MS;
      log(
        `${Math.round((now - runStarted) / 1000)} s: ${open} rows open; ${crashes.filter((c) => c.kind === 'sigkill').length} kills, ${crashes.filter((c) => c.kind === 'terminate').length} terminations, ${sigtermsSent} SIGTERMs, ${sigstopsSent} SIGSTOPs`,
      );
    }
    const candidates = ready();
    if (candidates.length === 0) continue;

    // SIGSTOP of the lease owner mid-cycle for longer than its TTL: another instance takes the lease
    // over, and at SIGCONT the former owner carries on with the calls it had in flight.
    if (
      sigstopsSent < options.sigstops &&
      !sigstopInProgress &&
      now >= nextSigstop &&
      candidates.length > 1
    ) {
      const { rows } = await client.query<{ owner: string; token: string; at: Date }>(
        `SELECT owner, fencing_token::text AS token, clock_timestamp() AS at
           FROM distributed_locks WHERE key = $1 AND expires_at > clock_timestamp()`,
        [CHAOS_LOCK_KEY],
      );
      const owner = rows[0] && candidates.find((i) => i.instanceId === rows[0].owner);
      if (owner) {
        sigstopsSent++;
        sigstopInProgress = true;
        const stopMs = CHAOS_WORKER.lockTtlMs + 1_000 + Math.round(random() * 2_000);
        owner.pause();
        const stoppedAt = rows[0].at;
        const fencingToken = Number(rows[0].token);
        crashes.push({
          kind: 'sigstop',
          instanceId: owner.instanceId,
          at: stoppedAt,
          detail: `lease owner (token ${fencingToken}), stopped for ${stopMs} ms`,
        });
        log(`${owner.instanceId} SIGSTOPped holding lease token ${fencingToken}, for ${stopMs} ms`);
        track(
          sleep(stopMs).then(async () => {
            const { rows: after } = await client.query<{ token: string | null; at: Date }>(
              `SELECT (SELECT fencing_token::text FROM distributed_locks WHERE key = $1) AS token,
                      clock_timestamp() AS at`,
              [CHAOS_LOCK_KEY],
            );
            owner.resume();
            const tokenAtResume = after[0].token === null ? null : Number(after[0].token);
            stops.push({
              record: {
                instanceId: owner.instanceId,
                fencingToken,
                stoppedAt,
                resumedAt: after[0].at,
                stoppedMs: after[0].at.getTime() - stoppedAt.getTime(),
                tokenAtResume,
              },
              instance: owner,
              leaseLostAtResume: owner.leaseLostLines,
            });
            log(`${owner.instanceId} SIGCONT; the lease is at token ${tokenAtResume}`);
            sigstopInProgress = false;
            nextSigstop = performance.now() + jittered(options.killEveryMs * 3);
          }),
        );
        continue;
      }
    }

    if (now >= nextKill) {
      nextKill = now + jittered(options.killEveryMs);
      // Most kills go to the instance that is working, where they can fall between a call and its commit.
      const working = candidates.filter((i) => i.inCycle);
      const victim = pick(working.length > 0 && random() < 0.7 ? working : candidates);
      victim.kill('SIGKILL');
      const at = await dbNow();
      crashes.push({
        kind: 'sigkill',
        instanceId: victim.instanceId,
        at,
        detail: victim.inCycle ? 'mid-cycle' : 'between cycles',
      });
      track(
        victim.exited.then(() => {
          if (!stopping) start(victim.slot);
        }),
      );
      continue;
    }

    // In the background (the outbox is held for a moment meanwhile): the other faults go on.
    if (!groupCommitKillRunning && now >= nextGroupCommitKill) {
      nextGroupCommitKill = now + jittered(options.groupCommitKillEveryMs);
      groupCommitKillRunning = true;
      track(
        killGroupCommits(databaseUrl)
          .then((kill) => {
            if (!kill) return;
            crashes.push({
              kind: 'group-commit-kill',
              instanceId: kill.instanceIds.join(','),
              at: kill.at,
              detail: `${kill.backends} backends`,
            });
          })
          .catch((error: unknown) => log(`group-commit kill failed: ${String(error)}`))
          .finally(() => {
            groupCommitKillRunning = false;
          }),
      );
    }

    if (now >= nextTerminate) {
      nextTerminate = now + jittered(options.terminateEveryMs);
      const victim = pick(candidates);
      const { rows } = await client.query<{ state: string | null; at: Date; ok: boolean }>(
        `SELECT state, clock_timestamp() AS at, pg_terminate_backend(pid) AS ok
           FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = $1`,
        [victim.instanceId],
      );
      const ended = rows.filter((r) => r.ok);
      terminatedBackends += ended.length;
      if (ended.length > 0) {
        crashes.push({
          kind: 'terminate',
          instanceId: victim.instanceId,
          at: ended[0].at,
          detail: `${ended.length} backends, ${ended.filter((r) => r.state !== 'idle').length} not idle`,
        });
      }
      continue;
    }

    if (sigtermsSent < options.sigterms && now >= nextSigterm) {
      const working = candidates.filter((i) => i.inCycle);
      if (working.length === 0) continue;
      sigtermsSent++;
      nextSigterm = now + jittered(options.killEveryMs * 2);
      const victim = pick(working);
      const sentAt = performance.now();
      victim.kill('SIGTERM');
      crashes.push({
        kind: 'sigterm',
        instanceId: victim.instanceId,
        at: await dbNow(),
        detail: 'mid-cycle',
      });
      track(
        victim.exited.then((exit) => {
          sigterms.push({
            instanceId: victim.instanceId,
            midCycle: true,
            code: exit.code,
            signal: exit.signal,
            exitMs: Math.round(performance.now() - sentAt),
            final: false,
          });
          log(
            `${victim.instanceId} SIGTERMed mid-cycle: exit code ${exit.code}, signal ${exit.signal}`,
          );
          if (!stopping) start(victim.slot);
        }),
      );
    }
  }

  // The last cycles' events go out within moments (the relay is woken by them); one whose relay
  // was killed or stopped waits for its claim to lapse (6 s, chaos-instance.ts) first.
  if (!timedOut) {
    const drainDeadline = performance.now() + OUTBOX_DRAIN_CAP_MS;
    let waiting = Number.POSITIVE_INFINITY;
    while (performance.now() < drainDeadline) {
      waiting = (
        await client.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM notification_outbox
            WHERE published_at IS NULL AND parked_at IS NULL`,
        )
      ).rows[0].n;
      if (waiting === 0) break;
      await sleep(TICK_MS);
    }
    log(`outbox: ${waiting === 0 ? 'drained' : `${waiting} events still unpublished`}`);
  }

  // Stop: let restarts in progress settle, then SIGTERM every instance once it has started
  // (a process still booting has no shutdown hooks yet) and expect exit 0.
  stopping = true;
  const processingMs = performance.now() - runStarted;
  await Promise.all([...pending]);
  await Promise.all(
    supervisor.running().map(async (instance) => {
      if (instance.stopping !== null) return instance.exited.then(() => undefined);
      const bootDeadline = performance.now() + 60_000;
      while (!instance.ready && performance.now() < bootDeadline) await sleep(TICK_MS);
      const sentAt = performance.now();
      instance.kill('SIGTERM');
      const exit = await instance.exited;
      sigterms.push({
        instanceId: instance.instanceId,
        midCycle: false,
        code: exit.code,
        signal: exit.signal,
        exitMs: Math.round(performance.now() - sentAt),
        final: true,
      });
    }),
  );
  log(`all instances stopped after ${Math.round(processingMs / 1000)} s; checking`);
  const sigstops: SigstopRecord[] = stops.map((s) => ({
    ...s.record,
    leaseLostAfterResume: s.instance.leaseLostLines - s.leaseLostAtResume,
  }));
  // Kept with the logs: what the runner did, for anyone re-checking a run.
  writeFileSync(
    join(options.outDir, 'chaos-events.json'),
    JSON.stringify({ settleMarginMs, crashes, sigterms, sigstops, unexpectedExits }, null, 2),
  );

  const check = await checkInvariants(client, {
    seededRows: seeded.length,
    timedOut,
    channels: CHAOS_CHANNELS,
    nonRetriableCodes: NON_RETRIABLE_CODES,
    sigterms,
    unexpectedExits,
  });
  log('invariants checked; scanning for personal data');
  const scan = await scanForPersonalData(client, options.outDir, seeded);
  const outbox = await checkEveryEventPublishedOnce(
    client,
    await consumeStream(natsUrl, CHAOS_STREAM),
  );
  const invariants = [...check.results, outbox, personalDataResult(scan)];

  const figures = await collectFigures(client, {
    options,
    supervisor,
    crashes,
    sigterms,
    terminatedBackends,
    processingMs,
    sigstops,
    duplicates: check.duplicates,
    cycles: check.cycles,
    auditedWrites: check.auditedWrites,
    unexpectedExits: unexpectedExits.length,
    settleMarginMs,
    leaks: scan.leakCount,
  });
  const passed = invariants.every((i) => i.passed);
  const report = renderReport(options, figures, invariants, passed);
  return {
    passed,
    invariants,
    figures,
    scan,
    crashes,
    sigterms,
    sigstops,
    unexpectedExits,
    settleMarginMs,
    outDir: options.outDir,
    report,
  };
}

function personalDataResult(scan: ScanResult): InvariantResult {
  const name = 'no personal data in logs, metrics, spans, outbox or stored errors';
  const counts = (record: Record<string, number>): string =>
    Object.entries(record)
      .map(([key, n]) => `${key} ${n}`)
      .join(', ');
  if (!scan.selfCheck) {
    return {
      name,
      passed: false,
      violations: scan.selfCheckMisses.length,
      detail: `the scanner's self-check failed, the search is broken: it missed ${scan.selfCheckMisses.join('; ')}`,
    };
  }
  if (scan.leakCount > 0) {
    // Two samples of each source: a stored error reads differently from a span.
    const samples = Object.keys(scan.leaksBySource).flatMap((source) =>
      scan.leaks.filter((l) => l.source === source).slice(0, 2),
    );
    return {
      name,
      passed: false,
      violations: scan.leakCount,
      detail: `${scan.leakCount} line(s) or value(s) with a run of seeded personal data (by source: ${counts(scan.leaksBySource)}; by field: ${counts(scan.leaksByField)}; by form: ${counts(scan.leaksByForm)}):\n${samples
        .map(
          (l) =>
            `          ${l.location}: ${JSON.stringify(l.needle)} (${l.field}, ${l.form}) in …${JSON.stringify(l.excerpt)}…`,
        )
        .join('\n')}`,
    };
  }
  return {
    name,
    passed: true,
    violations: 0,
    detail: `${scan.sources} sources searched (${Object.entries(scan.scanned)
      .map(([kind, bytes]) => `${kind} ${(bytes / 1024).toFixed(0)} KiB`)
      .join(
        ', ',
      )}) for ${scan.needles} distinct 8-character runs of the seeded addresses, subjects and bodies, raw and URL-/JSON-decoded`,
  };
}

async function collectFigures(
  client: Client,
  run: {
    options: ChaosOptions;
    supervisor: InstanceSupervisor;
    crashes: readonly CrashEvent[];
    sigterms: readonly SigtermRecord[];
    terminatedBackends: number;
    processingMs: number;
    sigstops: readonly SigstopRecord[];
    duplicates: DuplicateFigures;
    cycles: number;
    auditedWrites: number;
    unexpectedExits: number;
    settleMarginMs: number;
    leaks: number;
  },
): Promise<Array<readonly [string, string]>> {
  const { rows } = await client.query<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM notifications) AS rows,
            (SELECT count(*)::int FROM notifications WHERE status = 'Sent') AS sent,
            (SELECT count(*)::int FROM notifications WHERE status = 'Failed' AND next_attempt_at IS NULL) AS terminal,
            (SELECT count(*)::int FROM chaos_ledger WHERE event = 'started') AS calls,
            (SELECT count(*)::int FROM chaos_ledger WHERE event = 'succeeded') AS successes,
            (SELECT count(*)::int FROM chaos_ledger WHERE event = 'succeeded' AND deduplicated) AS deduplicated,
            (SELECT count(*)::int FROM chaos_ledger WHERE event = 'retriable') AS retriable,
            (SELECT count(*)::int FROM chaos_ledger WHERE event = 'non-retriable') AS non_retriable,
            (SELECT count(*)::int FROM chaos_ledger WHERE event = 'throttled') AS throttled,
            (SELECT count(*)::int FROM chaos_ledger WHERE event = 'hang') AS hangs,
            (SELECT count(*)::int FROM notification_outbox) AS events,
            (SELECT count(*)::int FROM chaos_audit WHERE late_success) AS late_recorded,
            (SELECT count(*)::int FROM chaos_audit
              WHERE late_success AND old_status = 'Failed' AND old_next_attempt_at IS NULL) AS late_after_terminal`,
  );
  const f = rows[0];
  const { rows: faultRows } = await client.query<{ fault: string; n: number }>(
    `SELECT fault, count(*)::int AS n FROM chaos_ledger
      WHERE call_id IS NOT NULL AND event <> 'answered' GROUP BY fault`,
  );
  const faults = new Map(faultRows.map((r) => [r.fault, r.n]));
  const fault = (kind: string): number => faults.get(kind) ?? 0;
  const echoes = FAULT_SHARES.map(([kind]) => kind).filter((k) => k.startsWith('echo-'));
  const seconds = run.processingMs / 1000;
  const kills = run.crashes.filter((c) => c.kind === 'sigkill');
  const terminations = run.crashes.filter((c) => c.kind === 'terminate');
  const groupCommitKills = run.crashes.filter((c) => c.kind === 'group-commit-kill');
  const chaosSigterms = run.sigterms.filter((s) => !s.final);
  const boots = run.supervisor.all
    .filter((i) => i.readyAt !== null)
    .map((i) => (i.readyAt as number) - i.startedAt)
    .sort((a, b) => a - b);
  const median = boots.length > 0 ? boots[Math.floor(boots.length / 2)] : 0;
  return [
    ['rows (channels email, sms, push)', `${f.rows}`],
    ['  Sent / terminal Failed', `${f.sent} / ${f.terminal}`],
    ['provider calls', `${f.calls}`],
    [
      '  succeeded / retriable / non-retriable / throttled / hung',
      `${f.successes} / ${f.retriable} / ${f.non_retriable} / ${f.throttled} / ${f.hangs}`,
    ],
    ['  of the successes, answered from provider dedup', `${f.deduplicated}`],
    [
      '  late successes: past the timeout / after the signal / after the margin',
      `${fault('late-success')} / ${fault('success-after-abort')} / ${fault('success-after-margin')}`,
    ],
    [
      '  recorded Sent after their attempt was written off (of them after a terminal Failed)',
      `${f.late_recorded} (${f.late_after_terminal})`,
    ],
    [
      '  echoes of personal data in error texts and codes',
      echoes.map((k) => `${k.slice('echo-'.length)} ${fault(k)}`).join(', '),
    ],
    ['settle margin', `${run.settleMarginMs} ms`],
    ['outbox events', `${f.events}`],
    ['audited row writes', `${run.auditedWrites}`],
    ['leases taken (fencing tokens)', `${run.cycles}`],
    [
      'instances at once / processes started',
      `${run.options.instances} / ${run.supervisor.all.length}`,
    ],
    [
      'SIGKILLs (mid-cycle)',
      `${kills.length} (${kills.filter((k) => k.detail === 'mid-cycle').length})`,
    ],
    [
      'pg_terminate_backend rounds / backends ended',
      `${terminations.length} / ${run.terminatedBackends}`,
    ],
    [
      'group commits killed (settle statements ended)',
      `${groupCommitKills.length} (${groupCommitKills.reduce((n, c) => n + Number.parseInt(c.detail, 10), 0)})`,
    ],
    [
      'SIGTERMs mid-cycle (exit codes)',
      `${chaosSigterms.length} (${chaosSigterms.map((s) => `${s.code} in ${s.exitMs} ms`).join(', ') || '-'})`,
    ],
    [
      'SIGSTOPs of the lease owner (stopped for; taken over)',
      `${run.sigstops.length} (${run.sigstops.map((s) => `${(s.stoppedMs / 1000).toFixed(1)} s`).join(', ') || '-'}; ${run.sigstops.filter((s) => s.tokenAtResume !== null && s.tokenAtResume > s.fencingToken).length} taken over)`,
    ],
    [
      '  lease-lost lines of the former owners after SIGCONT',
      `${run.sigstops.reduce((n, s) => n + s.leaseLostAfterResume, 0)}`,
    ],
    ['unexpected exits', `${run.unexpectedExits}`],
    ['rows with >1 successful call (duplicates)', `${run.duplicates.rows}`],
    [
      '  other successes: never committed / held (outcome_not_recorded) / answered after the write-off',
      `${run.duplicates.uncommitted} / ${run.duplicates.held} / ${run.duplicates.tooLate}`,
    ],
    ['lines and values with personal data', `${run.leaks}`],
    ['duration (first start to last row final)', `${seconds.toFixed(1)} s`],
    [
      'throughput',
      `${(f.rows / seconds).toFixed(0)} rows/s, ${(f.calls / seconds).toFixed(0)} calls/s`,
    ],
    ['instance start-up, median', `${(median / 1000).toFixed(1)} s`],
  ];
}

function renderReport(
  options: ChaosOptions,
  figures: ReadonlyArray<readonly [string, string]>,
  invariants: readonly InvariantResult[],
  passed: boolean,
): string {
  const width = Math.max(...figures.map(([label]) => label.length));
  const lines = [
    `Chaos run: ${options.rows} rows, ${options.instances} instances, seed ${options.seed}, concurrency ${options.concurrency}, batch ${options.batchSize}`,
    '',
    ...figures.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
    '',
    ...invariants.map((i) => `  ${i.passed ? 'PASS' : 'FAIL'}  ${i.name}\n        ${i.detail}`),
    '',
    `${passed ? 'PASS' : 'FAIL'}: ${invariants.filter((i) => i.passed).length} of ${invariants.length} invariants hold; logs, metric dumps and spans in ${options.outDir}`,
  ];
  return lines.join('\n');
}

if (require.main === module) {
  const options = parseChaosOptions(process.argv.slice(2));
  runChaos(options)
    .then((result) => {
      process.stdout.write(`${result.report}\n`);
      process.exit(result.passed ? 0 : 1);
    })
    .catch((error: unknown) => {
      process.stderr.write(
        `chaos run failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(2);
    });
}
