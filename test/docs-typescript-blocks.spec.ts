import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  checkDocsTypeScript,
  defaultMarkdownFiles,
  type DocsCheckResult,
  type DocsProblem,
} from '../scripts/check-docs-typescript';

const ROOT = resolve(__dirname, '..');

/** Markdown pages the checker must refuse or accept, one concern each. */
const FIXTURES: Record<string, string> = {
  'type-error.md': [
    '# A page',
    '',
    '```ts',
    "import { NotificationsRetryModule } from '@pin/notifications-retry';",
    '',
    "export const retry = NotificationsRetryModule.forRoot({ concurrency: '200' });",
    '```',
  ].join('\n'),
  'compiles.md': [
    '```typescript',
    "import { NotificationsRetryModule } from '@pin/notifications-retry';",
    '',
    'export const retry = NotificationsRetryModule.forRoot({ concurrency: 200 });',
    '```',
    '',
    '<!-- compile: fragment',
    "import { NotificationsRetryModule } from '@pin/notifications-retry';",
    '-->',
    '```ts',
    'NotificationsRetryModule.forRoot({ batchSize: 50 });',
    '```',
    '',
    '```json',
    '{ "not": "checked" }',
    '```',
  ].join('\n'),
  'fragment-without-prelude.md': [
    '<!-- compile: fragment -->',
    '```ts',
    'NotificationsRetryModule.forRoot({ batchSize: 50 });',
    '```',
  ].join('\n'),
  'unused-prelude-import.md': [
    '<!-- compile: module',
    "import { Injectable } from '@nestjs/common';",
    '-->',
    '```ts',
    'export const answer = 42;',
    '```',
  ].join('\n'),
  'same-as-differs.md': [
    '<!-- compile: same-as examples/getting-started/channel.sql -->',
    '```sql',
    "INSERT INTO notification_channels (key) VALUES ('email');",
    '```',
  ].join('\n'),
  'bad-markers.md': [
    '<!-- compile: snippet -->',
    '```ts',
    'export const a = 1;',
    '```',
    '',
    '<!-- compile: fragment -->',
    'A paragraph between the marker and its fence.',
    '',
    '```ts',
    'export const b = 2;',
    '```',
    '',
    '<!-- compile: module -->',
    '```sql',
    'SELECT 1;',
    '```',
  ].join('\n'),
};

describe('TypeScript blocks of README.md and docs/ (scripts/check-docs-typescript.ts)', () => {
  let fixtureDir: string;
  let fixtures: DocsCheckResult;
  const problemsOf = (file: string): DocsProblem[] =>
    fixtures.problems.filter((problem) => problem.file === join(fixtureDir, file));

  beforeAll(() => {
    fixtureDir = mkdtempSync(join(tmpdir(), 'docs-typescript-'));
    for (const [name, text] of Object.entries(FIXTURES)) {
      writeFileSync(join(fixtureDir, name), `${text}\n`);
    }
    fixtures = checkDocsTypeScript(
      ROOT,
      Object.keys(FIXTURES).map((name) => join(fixtureDir, name)),
    );
  });

  afterAll(() => rmSync(fixtureDir, { recursive: true, force: true }));

  it('every block in the repo compiles, the README example among them as its files', () => {
    const files = defaultMarkdownFiles(ROOT);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/data-contract.md']));

    const { blocks, problems } = checkDocsTypeScript(ROOT, files);

    expect(problems.map((p) => `${p.file}:${p.line}: ${p.message}`)).toEqual([]);
    const sameAs = blocks.filter((b) => b.mode === 'same-as').map((b) => b.sameAs);
    expect(sameAs).toEqual(
      expect.arrayContaining([
        'examples/getting-started/app.module.ts',
        'examples/getting-started/retry-options.ts',
        'examples/getting-started/health.controller.ts',
        'examples/getting-started/acme-email.adapter.ts',
        'examples/getting-started/channel.sql',
        'examples/getting-started/notifications.sql',
      ]),
    );
    expect(blocks.filter((b) => b.mode !== 'same-as').length).toBeGreaterThan(5);
  });

  it('fails a block with a type error, at its markdown line', () => {
    expect(problemsOf('type-error.md')).toEqual([
      expect.objectContaining({ line: 6, message: expect.stringMatching(/^TS2322: .*string/) }),
    ]);
  });

  it('accepts whole modules and fragments with their prelude, and leaves other languages alone', () => {
    expect(problemsOf('compiles.md')).toEqual([]);
    expect(
      fixtures.blocks.filter((b) => b.file.endsWith('compiles.md')).map((b) => b.mode),
    ).toEqual(['module', 'fragment']);
  });

  it('fails a fragment whose names come from nowhere', () => {
    expect(problemsOf('fragment-without-prelude.md')).toEqual([
      expect.objectContaining({
        line: 3,
        message: "TS2304: Cannot find name 'NotificationsRetryModule'.",
      }),
    ]);
  });

  it('type-checks the prelude too: an unused import there fails', () => {
    expect(problemsOf('unused-prelude-import.md')).toEqual([
      expect.objectContaining({
        line: 2,
        message: expect.stringMatching(/^TS6133: .*\(in the prelude\)$/),
      }),
    ]);
  });

  it('fails a same-as block that no longer equals its file', () => {
    expect(problemsOf('same-as-differs.md')).toEqual([
      expect.objectContaining({
        message:
          'the block differs from examples/getting-started/channel.sql (copy the file into the block)',
      }),
    ]);
  });

  it('refuses unknown markers and markers that do not sit right before their fence', () => {
    expect(problemsOf('bad-markers.md').map((p) => [p.line, p.message])).toEqual([
      [1, 'unknown compile marker "snippet" (module, fragment or same-as <path>)'],
      [6, expect.stringMatching(/^compile marker not followed directly by a ```ts fence/)],
      [13, expect.stringMatching(/^compile marker not followed directly by a ```ts fence/)],
    ]);
  });

  it('npm run check:docs exits 1 and prints file:line for a broken page', () => {
    const broken = join(fixtureDir, 'type-error.md');
    const run = spawnSync(
      process.execPath,
      [require.resolve('ts-node/dist/bin'), '-T', 'scripts/check-docs-typescript.ts', broken],
      { cwd: ROOT, encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`${broken}:6: TS2322`);
  });
});
