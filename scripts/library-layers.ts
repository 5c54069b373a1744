import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

/**
 * The library's parts from the bottom up (docs/architecture.md). A part may
 * import from its own layer and the layers below it, never from one above:
 * the vocabulary every part shares sits at the bottom, the cycle orchestrates
 * the parts below it, and what reads the cycle's state or drives it (health,
 * operations, the ops CLI) sits above it.
 */
export const LIBRARY_LAYERS: readonly (readonly string[])[] = [
  ['vocabulary', 'errors', 'clock', 'privacy', 'alerts'],
  ['options'],
  ['circuit', 'providers'],
  ['observability'],
  ['persistence'],
  ['locking', 'channels'],
  ['outbox'],
  ['cycle'],
  ['health', 'operations'],
  ['ops-cli', 'testing', 'extensions', '(root)'],
];

export const LIBRARY_SOURCE = 'libs/notifications-retry/src';

/** The part a source file (path relative to the library's src) belongs to. */
export function partOf(path: string): string {
  const segments = normalize(path).split(/[\\/]/);
  return segments.length > 1 ? segments[0] : '(root)';
}

export function layerOf(part: string): number {
  return LIBRARY_LAYERS.findIndex((layer) => layer.includes(part));
}

export interface LayerViolation {
  readonly file: string;
  readonly imports: string;
  readonly why: string;
}

/**
 * Imports that point up a layer, or from a part no layer names, in `files`
 * (path relative to the library's src → source text). Specs are left out: a
 * unit's spec may use whatever tests it.
 */
export function layerViolations(files: ReadonlyMap<string, string>): LayerViolation[] {
  const violations: LayerViolation[] = [];
  for (const [file, text] of files) {
    if (file.endsWith('.spec.ts')) continue;
    const from = partOf(file);
    if (layerOf(from) < 0) {
      violations.push({ file, imports: '', why: `part "${from}" is in no layer` });
      continue;
    }
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = normalize(join(dirname(file), fileName));
      if (target.startsWith('..')) {
        violations.push({ file, imports: fileName, why: 'reaches outside the library' });
        continue;
      }
      const to = partOf(target);
      if (to === from) continue;
      if (layerOf(to) < 0) {
        violations.push({ file, imports: fileName, why: `part "${to}" is in no layer` });
      } else if (layerOf(to) > layerOf(from)) {
        violations.push({
          file,
          imports: fileName,
          why: `"${from}" (layer ${layerOf(from)}) imports "${to}" (layer ${layerOf(to)}), above it`,
        });
      }
    }
  }
  return violations;
}

/** Every TypeScript file of the library, path relative to its src → text. */
export function librarySources(root: string): Map<string, string> {
  const base = join(root, LIBRARY_SOURCE);
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts'))
        files.set(relative(base, path), readFileSync(path, 'utf8'));
    }
  };
  walk(base);
  return files;
}
