import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(__dirname, '..');
const UNIT = 'libs/notifications-retry/src/privacy/contains-personal-data.ts';

interface MutationReport {
  files: Record<string, { mutants: Array<{ status: string }> }>;
}

/**
 * `npm run mutate` as docs/reliability.md prints it, on one small unit: the
 * project's own StrykerJS config instruments it, runs its specs against every
 * mutant and kills them. The whole run takes about 40 minutes and is not in CI.
 */
describe('npm run mutate (StrykerJS) on one unit', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pin-mutate-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("kills every mutant of the unit that compiles, with the project's config", async () => {
    const config = JSON.parse(await readFile(join(ROOT, 'stryker.config.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const reportFile = join(dir, 'mutation.json');
    const configFile = join(dir, 'stryker.config.json');
    await writeFile(
      configFile,
      JSON.stringify({
        ...config,
        $schema: undefined,
        mutate: [UNIT],
        reporters: ['json'],
        jsonReporter: { fileName: reportFile },
        tempDirName: join(dir, 'sandbox'),
        concurrency: 1,
      }),
    );
    await promisify(execFile)('npm', ['run', '-s', 'mutate', '--', configFile], {
      cwd: ROOT,
      env: { ...process.env, JEST_WORKER_ID: undefined },
      timeout: 150_000,
    });

    const report = JSON.parse(await readFile(reportFile, 'utf8')) as MutationReport;
    const statuses = Object.values(report.files).flatMap((file) =>
      file.mutants.map((m) => m.status),
    );
    expect(statuses.filter((status) => status !== 'CompileError').length).toBeGreaterThan(0);
    expect(statuses.filter((status) => !['Killed', 'CompileError'].includes(status))).toEqual([]);
  }, 180_000);
});
