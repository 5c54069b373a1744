import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { defaultMarkdownFiles } from '../scripts/check-docs-typescript';

const ROOT = resolve(__dirname, '..');

describe('links of README.md and docs/', () => {
  it('links nothing outside the repository, which a clone would not have', () => {
    const escaping: string[] = [];
    for (const file of defaultMarkdownFiles(ROOT)) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)\s#]+)[^)]*\)/g)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const path = relative(ROOT, resolve(ROOT, dirname(file), target));
        if (path.startsWith('..')) escaping.push(`${file}: ${target}`);
      }
    }
    expect(escaping).toEqual([]);
  });
});
