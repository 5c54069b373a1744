import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LIBRARY_LAYERS, layerViolations, librarySources, partOf } from '../scripts/library-layers';

const ROOT = resolve(__dirname, '..');

describe('the library in layers (docs/architecture.md)', () => {
  it('has no import from a lower part into a higher one', () => {
    expect(layerViolations(librarySources(ROOT))).toEqual([]);
  });

  it('places every part of the library in exactly one layer', () => {
    const parts = new Set([...librarySources(ROOT).keys()].map(partOf));
    const placed = LIBRARY_LAYERS.flat();
    expect([...parts].filter((part) => !placed.includes(part))).toEqual([]);
    expect(placed.filter((part, i) => placed.indexOf(part) !== i)).toEqual([]);
    expect(placed.filter((part) => !parts.has(part))).toEqual([]);
  });

  it('finds an arrow back up, and a part no layer names', () => {
    const files = new Map([
      ['persistence/guard.ts', "import { errorText } from '../cycle/error-text';"],
      ['persistence/sql/claim.sql.ts', "import type { Lease } from '../../vocabulary/lease';"],
      [
        'cycle/service.ts',
        "import { Runner } from './runner';\nimport { Pauses } from '../channels/pauses';",
      ],
      ['newpart/thing.ts', 'export const x = 1;'],
    ]);
    expect(layerViolations(files)).toEqual([
      {
        file: 'persistence/guard.ts',
        imports: '../cycle/error-text',
        why: '"persistence" (layer 4) imports "cycle" (layer 7), above it',
      },
      { file: 'newpart/thing.ts', imports: '', why: 'part "newpart" is in no layer' },
    ]);
  });

  it('is the table docs/architecture.md shows', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d+) \| ([^|]+) \|/gm)].map(([, layer, parts]) => ({
      layer: Number(layer),
      parts: [...parts.matchAll(/`([^`]+)`/g)].map(([, part]) => part),
    }));
    expect(rows).toEqual(LIBRARY_LAYERS.map((parts, layer) => ({ layer, parts: [...parts] })));
  });
});
