import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { INSTANCE_CONFIG_ENV, WORKER_APP_PREFIX, type InstanceConfig } from './chaos-config';

const REPO_ROOT = resolve(__dirname, '..', '..');

/** The instance script compiled to JavaScript, and the tsconfig that maps the library's alias. */
export interface InstanceProgram {
  readonly script: string;
  readonly tsconfig: string;
}

export interface InstanceExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** One process of one slot; a restart makes a new generation with a new instance id. */
export class ChaosInstance {
  readonly startedAt = performance.now();
  readyAt: number | null = null;
  /** Between a `retry-cycle-started` line and its `cycle-completed`. */
  inCycle = false;
  cyclesStarted = 0;
  /** Why the runner stopped it, if it did; anything else is an unexpected exit. */
  stopping: 'sigkill' | 'sigterm' | null = null;
  /** SIGSTOPped and not yet continued: no other fault may pick it. */
  paused = false;
  /** `lease-lost` lines logged: writes the fence turned away. */
  leaseLostLines = 0;
  /** The end of its stderr, for the report of an unexpected exit. */
  stderrTail = '';
  readonly exited: Promise<InstanceExit>;
  private readonly child: ChildProcess;

  constructor(
    readonly slot: number,
    readonly generation: number,
    readonly instanceId: string,
    readonly files: { stdout: string; stderr: string; metrics: string; spans: string },
    config: InstanceConfig,
    program: InstanceProgram,
  ) {
    const stdout = createWriteStream(files.stdout);
    const stderr = createWriteStream(files.stderr);
    this.child = spawn(process.execPath, ['-r', 'tsconfig-paths/register', program.script], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        [INSTANCE_CONFIG_ENV]: JSON.stringify(config),
        // node-postgres reads it for every connection of the worker's pool: the audit trigger and
        // pg_terminate_backend tell the instances apart by it.
        PGAPPNAME: instanceId,
        TS_NODE_PROJECT: program.tsconfig,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolveExit) => {
      let pending = 3;
      let exit: InstanceExit = { code: null, signal: null };
      const done = (): void => {
        if (--pending === 0) resolveExit(exit);
      };
      this.child.on('exit', (code, signal) => {
        exit = { code, signal };
        done();
      });
      pipe(this.child.stdout, stdout, (line) => this.onLine(line), done);
      pipe(this.child.stderr, stderr, (line) => this.onErrorLine(line), done);
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get ready(): boolean {
    return this.readyAt !== null;
  }

  kill(signal: 'SIGKILL' | 'SIGTERM'): void {
    this.stopping ??= signal === 'SIGKILL' ? 'sigkill' : 'sigterm';
    // A stopped process acts on SIGTERM only once it runs again.
    if (this.paused && signal === 'SIGTERM') this.resume();
    this.child.kill(signal);
  }

  /** SIGSTOP: the process, its timers and its connections freeze; the database sees it idle. */
  pause(): void {
    this.paused = true;
    this.child.kill('SIGSTOP');
  }

  resume(): void {
    this.child.kill('SIGCONT');
    this.paused = false;
  }

  /** The last error its stderr shows ("Error: Connection terminated unexpectedly"), if any. */
  get lastError(): string | undefined {
    const lines = this.stderrTail.split('\n');
    const thrown = lines.filter((l) => /^\s*\w*Error\b.*:/.test(l)).at(-1);
    return (thrown ?? lines.filter((l) => /error/i.test(l)).at(-1))?.trim().slice(0, 300);
  }

  private onErrorLine(line: string): void {
    this.stderrTail = `${this.stderrTail}\n${line}`.slice(-4_000);
  }

  private onLine(line: string): void {
    if (!line.includes('"event"')) return;
    if (line.includes('"event":"lease-lost"')) this.leaseLostLines++;
    if (line.includes('"event":"chaos-instance-ready"')) this.readyAt ??= performance.now();
    else if (line.includes('"event":"retry-cycle-started"')) {
      this.inCycle = true;
      this.cyclesStarted++;
    } else if (
      line.includes('"event":"cycle-completed"') ||
      line.includes('"event":"cycle-failed"')
    )
      this.inCycle = false;
  }
}

/** Copies a child's stream into its log file and hands each complete line to `onLine`. */
function pipe(
  source: NodeJS.ReadableStream | null,
  file: WriteStream,
  onLine: (line: string) => void,
  done: () => void,
): void {
  if (!source) {
    file.end(done);
    return;
  }
  let partial = '';
  source.on('data', (chunk: Buffer) => {
    file.write(chunk);
    const text = partial + chunk.toString('utf8');
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
  source.on('end', () => {
    if (partial) onLine(partial);
    file.end(done);
  });
}

export interface SupervisorOptions {
  readonly outDir: string;
  readonly program: InstanceProgram;
  readonly config: Omit<InstanceConfig, 'instanceId' | 'metricsFile' | 'spansFile'>;
}

/** Starts, kills and restarts the instances; keeps every generation for the checks and the scan. */
export class InstanceSupervisor {
  readonly all: ChaosInstance[] = [];
  private readonly current = new Map<number, ChaosInstance>();
  private generations = 0;

  private isClosed = false;

  constructor(private readonly options: SupervisorOptions) {}

  /** Once closed, an instance that exits is not restarted. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** SIGKILLs every instance still running and waits for them: a run's last word. */
  async close(): Promise<void> {
    this.isClosed = true;
    await Promise.all(
      this.running().map(async (instance) => {
        instance.kill('SIGKILL');
        await instance.exited;
      }),
    );
  }

  start(slot: number): ChaosInstance {
    const generation = ++this.generations;
    const instanceId = `${WORKER_APP_PREFIX}i${slot}-g${generation}`;
    const base = join(this.options.outDir, instanceId);
    const files = {
      stdout: `${base}.stdout.log`,
      stderr: `${base}.stderr.log`,
      metrics: `${base}.metrics.prom`,
      spans: `${base}.spans.jsonl`,
    };
    const instance = new ChaosInstance(
      slot,
      generation,
      instanceId,
      files,
      {
        ...this.options.config,
        instanceId,
        metricsFile: files.metrics,
        spansFile: files.spans,
      },
      this.options.program,
    );
    this.current.set(slot, instance);
    this.all.push(instance);
    return instance;
  }

  running(): ChaosInstance[] {
    return [...this.current.values()];
  }

  instance(slot: number): ChaosInstance | undefined {
    return this.current.get(slot);
  }
}
