import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InstanceSupervisor } from './chaos/instance-supervisor';

/**
 * The supervisor's close, the chaos run's last cleanup before its compiled
 * copy goes: a run that failed half-way must leave no instance running (one
 * that exited later would be restarted from a script no longer there).
 */
describe('InstanceSupervisor.close', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'chaos-supervisor-'));
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('kills every instance still running, waits for it, and is closed afterwards', async () => {
    const script = join(dir, 'forever.js');
    writeFileSync(script, 'setInterval(() => undefined, 60_000);\n');
    const tsconfig = join(dir, 'tsconfig.json');
    writeFileSync(tsconfig, '{ "compilerOptions": {} }\n');
    const supervisor = new InstanceSupervisor({
      outDir: dir,
      program: { script, tsconfig },
      config: {
        databaseUrl: 'postgres://unused',
        seed: 1,
        concurrency: 1,
        batchSize: 1,
        natsUrl: null,
      },
    });
    const [first, second] = [supervisor.start(1), supervisor.start(2)];
    expect(supervisor.closed).toBe(false);

    await supervisor.close();

    expect(supervisor.closed).toBe(true);
    await expect(first.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });
    await expect(second.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });
  });
});
