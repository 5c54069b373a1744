import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/** What the memory child needs: the library, the app's database helpers and the harness. */
const SOURCE_DIRS = ['libs', 'src', 'test/bench'];

export interface CompiledCopy {
  /** The compiled file of `source` (a path from the repository root, `.ts`). */
  file(source: string): string;
  remove(): void;
}

/**
 * The repository's TypeScript as the JavaScript a host deploys (CommonJS, the
 * tsconfig's options), in a temporary directory beside a link to node_modules.
 * Transpiled file by file, as ts-node's transpile-only mode does, but ahead of
 * time: a process started from it holds no TypeScript compiler (about 19 MB of
 * heap, which V8 then sizes its old generation and page pool on) and compiles
 * nothing while it runs, so what its memory does is the library's.
 */
export function compiledCopy(root: string): CompiledCopy {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error(`cannot read ${join(root, 'tsconfig.json')}`);
  const compilerOptions: ts.CompilerOptions = {
    ...parsed.options,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    sourceMap: false,
    declaration: false,
  };
  const out = mkdtempSync(join(tmpdir(), 'bench-compiled-'));
  for (const dir of SOURCE_DIRS) {
    for (const source of typeScriptFiles(join(root, dir))) {
      const { outputText } = ts.transpileModule(readFileSync(source, 'utf8'), {
        compilerOptions,
        fileName: source,
      });
      const target = join(out, relative(root, source)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, outputText);
    }
  }
  symlinkSync(join(root, 'node_modules'), join(out, 'node_modules'), 'dir');
  return {
    file: (source) => join(out, source.replace(/\.ts$/, '.js')),
    remove: () => rmSync(out, { recursive: true, force: true }),
  };
}

function* typeScriptFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* typeScriptFiles(path);
    else if (/(?<!\.spec|\.d)\.ts$/.test(entry.name)) yield path;
  }
}
