/**
 * Type-checks every TypeScript block (```ts or ```typescript) of README.md and docs/**\/*.md with
 * the repo's tsconfig.json (strict, no unused locals or parameters), `@pin/notifications-retry`
 * resolving to the library through its `paths`. A block that stops compiling fails `npm test`
 * (test/docs-typescript-blocks.spec.ts); `npm run check:docs` runs the same check on its own.
 *
 * By default a block is a whole module: it compiles as it stands, its imports included. An HTML
 * comment ending on the line right before the fence (hidden when the page is rendered) may say
 * otherwise; nothing else is accepted:
 *
 *   <!-- compile: same-as examples/getting-started/app.module.ts -->
 *     The block is that file of the repo, character for character (trailing blank lines aside);
 *     the file is what is compiled (relative imports resolve from it) and run by tests. Edit the
 *     file, then copy it here. It may precede any fence: a ```sql block the same way equals a
 *     .sql file that a test runs (compared only, not type-checked).
 *
 *   <!-- compile: fragment -->
 *     The block is statements inside an async function (`await` allowed): a call, an option
 *     object in place. Its names must still come from somewhere: the prelude.
 *
 *   <!-- compile: module
 *   import { Injectable } from '@nestjs/common';
 *   declare class AcmeClient { send(to: string): Promise<string> }
 *   -->
 *     `module` and `fragment` may carry a prelude: the lines after the marker, up to `-->`, put
 *     before the block: the imports and the reader's own classes the page leaves out (relative
 *     imports resolve from the repo's root). It is type-checked with the block (an unused import
 *     there fails too).
 *
 * A marker not directly followed by a fence it applies to (`module`, `fragment`: a TypeScript
 * one), an unknown marker and an unclosed fence are errors. Problems are reported as
 * `file:line: message`, the line being the markdown's.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

export type BlockMode = 'module' | 'fragment' | 'same-as';

export interface TypeScriptBlock {
  /** The markdown file, as given. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly mode: BlockMode;
  readonly code: string;
  /** `module` / `fragment`: put before the code; `markerLine` is where its first line is. */
  readonly prelude: string;
  readonly markerLine: number;
  /** `same-as`: the repo file the block must equal. */
  readonly sameAs: string | null;
}

export interface DocsProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

export interface DocsCheckResult {
  readonly blocks: readonly TypeScriptBlock[];
  readonly problems: readonly DocsProblem[];
}

const TYPESCRIPT_LANGUAGES = new Set(['ts', 'typescript']);
const MARKER = /^<!--\s*compile:\s*(\S+)\s*(.*)$/;
const FENCE_OPEN = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/;

/** README.md and every .md under docs/, relative to `rootDir`, in a stable order. */
export function defaultMarkdownFiles(rootDir: string): string[] {
  const found: string[] = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(rootDir, dir), { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  if (existsSync(join(rootDir, 'docs'))) walk('docs');
  return found;
}

/** The TypeScript blocks of one markdown text, and what is wrong with their markers. */
export function extractTypeScriptBlocks(
  markdown: string,
  file: string,
): { blocks: TypeScriptBlock[]; problems: DocsProblem[] } {
  const lines = markdown.split(/\r?\n/);
  const blocks: TypeScriptBlock[] = [];
  const problems: DocsProblem[] = [];
  let pendingMarker: { line: number; endLine: number } | null = null;

  for (let index = 0; index < lines.length; index++) {
    const text = lines[index];
    const trimmed = text.trim();

    if (MARKER.test(trimmed)) {
      const endIndex = lines.findIndex((candidate, at) => at >= index && candidate.includes('-->'));
      if (endIndex < 0) {
        problems.push({ file, line: index + 1, message: 'compile marker without a closing -->' });
        break;
      }
      if (pendingMarker) {
        problems.push({ file, line: pendingMarker.line, message: markerWithoutBlock() });
      }
      pendingMarker = { line: index + 1, endLine: endIndex + 1 };
      index = endIndex;
      continue;
    }

    const open = FENCE_OPEN.exec(text);
    if (!open) {
      if (trimmed !== '' && pendingMarker) {
        problems.push({ file, line: pendingMarker.line, message: markerWithoutBlock() });
        pendingMarker = null;
      }
      continue;
    }

    const [, indent, fence, language] = open;
    const closeIndex = findClosingFence(lines, index + 1, fence);
    if (closeIndex < 0) {
      problems.push({ file, line: index + 1, message: `unclosed ${fence} fence` });
      break;
    }
    const isTypeScript = TYPESCRIPT_LANGUAGES.has(language.toLowerCase());
    const marker = pendingMarker;
    pendingMarker = null;
    if (marker && marker.endLine !== index) {
      problems.push({ file, line: marker.line, message: markerWithoutBlock() });
    }
    const parsed =
      marker && marker.endLine === index
        ? parseMarker(lines.slice(marker.line - 1, marker.endLine), marker.line, file)
        : isTypeScript
          ? { mode: 'module' as const, prelude: '', sameAs: null }
          : null;
    if (parsed && 'message' in parsed) {
      problems.push(parsed);
    } else if (parsed && !isTypeScript && parsed.mode !== 'same-as') {
      problems.push({ file, line: marker?.line ?? index + 1, message: markerWithoutBlock() });
    } else if (parsed) {
      const code = lines
        .slice(index + 1, closeIndex)
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()))
        .join('\n');
      blocks.push({ file, line: index + 1, code, markerLine: marker?.line ?? 0, ...parsed });
    }
    index = closeIndex;
  }
  if (pendingMarker) {
    problems.push({ file, line: pendingMarker.line, message: markerWithoutBlock() });
  }
  return { blocks, problems };
}

/** Extracts and type-checks the blocks of `markdownFiles` (relative to `rootDir` or absolute). */
export function checkDocsTypeScript(
  rootDir: string,
  markdownFiles: readonly string[],
): DocsCheckResult {
  const root = resolve(rootDir);
  const blocks: TypeScriptBlock[] = [];
  const problems: DocsProblem[] = [];
  for (const file of markdownFiles) {
    const extracted = extractTypeScriptBlocks(readFileSync(resolve(root, file), 'utf8'), file);
    blocks.push(...extracted.blocks);
    problems.push(...extracted.problems);
  }

  // Each block is its own file in the repo's root, so node_modules, `paths` and a prelude's
  // relative imports resolve as they do for the repo's code. The files do not exist: the host
  // serves them from memory.
  const virtualFiles = new Map<
    string,
    { block: TypeScriptBlock; text: string; codeStart: number }
  >();
  const sameAsFiles = new Map<string, TypeScriptBlock>();
  blocks.forEach((block, at) => {
    if (block.mode === 'same-as') {
      const path = resolve(root, block.sameAs ?? '');
      if (!existsSync(path)) {
        problems.push({
          file: block.file,
          line: block.line,
          message: `same-as ${block.sameAs}: no such file`,
        });
        return;
      }
      const source = readFileSync(path, 'utf8').replace(/\s+$/, '');
      if (source !== block.code.replace(/\s+$/, '')) {
        problems.push({
          file: block.file,
          line: block.line + firstDifferentLine(block.code, source),
          message: `the block differs from ${block.sameAs} (copy the file into the block)`,
        });
        return;
      }
      // A .sql or .sh twin is compared only; a TypeScript file is type-checked as itself.
      if (path.endsWith('.ts')) sameAsFiles.set(path, block);
      return;
    }
    const name = join(root, `.docs-block.${safeName(block.file)}.${block.line}.${at}.ts`);
    const preludeLines = block.prelude === '' ? 0 : block.prelude.split('\n').length;
    const head = block.prelude === '' ? '' : `${block.prelude}\n`;
    const text =
      block.mode === 'fragment'
        ? `${head}export async function docsFragment(): Promise<void> {\n${block.code}\n}\n`
        : `${head}${block.code}\nexport {};\n`;
    virtualFiles.set(name, {
      block,
      text,
      codeStart: preludeLines + (block.mode === 'fragment' ? 1 : 0),
    });
  });

  if (virtualFiles.size + sameAsFiles.size > 0) {
    problems.push(...typeCheck(root, virtualFiles, sameAsFiles));
  }
  return { blocks, problems };
}

function typeCheck(
  root: string,
  virtualFiles: Map<string, { block: TypeScriptBlock; text: string; codeStart: number }>,
  sameAsFiles: Map<string, TypeScriptBlock>,
): DocsProblem[] {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (config.error) return [{ file: 'tsconfig.json', line: 1, message: flatten(config.error) }];
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, undefined, configPath);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: true,
    incremental: false,
    declaration: false,
    sourceMap: false,
  };

  const host = ts.createCompilerHost(options, true);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (path) => virtualFiles.get(resolve(path))?.text ?? readFile(path);
  host.fileExists = (path) => virtualFiles.has(resolve(path)) || fileExists(path);
  host.getSourceFile = (path, language, onError, shouldCreate) => {
    const virtual = virtualFiles.get(resolve(path));
    return virtual
      ? ts.createSourceFile(path, virtual.text, language, true)
      : getSourceFile(path, language, onError, shouldCreate);
  };

  const program = ts.createProgram({
    rootNames: [...virtualFiles.keys(), ...sameAsFiles.keys()],
    options,
    host,
  });
  const problems: DocsProblem[] = [];
  for (const diagnostic of program.getOptionsDiagnostics()) {
    problems.push({ file: 'tsconfig.json', line: 1, message: flatten(diagnostic) });
  }
  for (const sourceFile of program.getSourceFiles()) {
    const path = resolve(sourceFile.fileName);
    const virtual = virtualFiles.get(path);
    const sameAs = sameAsFiles.get(path);
    if (!virtual && !sameAs) continue;
    const diagnostics = [
      ...program.getSyntacticDiagnostics(sourceFile),
      ...program.getSemanticDiagnostics(sourceFile),
    ];
    for (const diagnostic of diagnostics) {
      const at =
        diagnostic.start === undefined
          ? 0
          : sourceFile.getLineAndCharacterOfPosition(diagnostic.start).line;
      let line: number;
      let where = '';
      if (sameAs) {
        line = sameAs.line + 1 + at;
        where = ` (${relative(root, path)}:${at + 1})`;
      } else if (virtual && at < virtual.codeStart) {
        line = virtual.block.markerLine + 1 + at;
        where = ' (in the prelude)';
      } else {
        line =
          (virtual as { block: TypeScriptBlock }).block.line + 1 + at - (virtual?.codeStart ?? 0);
      }
      const block = (sameAs ?? virtual?.block) as TypeScriptBlock;
      problems.push({
        file: block.file,
        line,
        message: `TS${diagnostic.code}: ${flatten(diagnostic)}${where}`,
      });
    }
  }
  return problems;
}

function parseMarker(
  commentLines: string[],
  line: number,
  file: string,
): { mode: BlockMode; prelude: string; sameAs: string | null } | DocsProblem {
  const [first, ...rest] = commentLines.map((text) => text.trim());
  const match = MARKER.exec(first) as RegExpExecArray;
  const mode = match[1];
  const tail = match[2].replace(/-->\s*$/, '').trim();
  // The prelude: every line after the marker's, the closing line without its `-->`.
  const prelude = rest
    .map((text, at) => (at === rest.length - 1 ? text.replace(/-->\s*$/, '') : text))
    .join('\n')
    .replace(/\s+$/, '');
  switch (mode) {
    case 'same-as':
      if (tail === '' || rest.length > 0) {
        return { file, line, message: 'compile: same-as takes one repo path and no prelude' };
      }
      return { mode, prelude: '', sameAs: tail };
    case 'module':
    case 'fragment':
      if (tail !== '') {
        return {
          file,
          line,
          message: `compile: ${mode} takes no argument on its line; got "${tail}"`,
        };
      }
      return { mode, prelude, sameAs: null };
    default:
      return {
        file,
        line,
        message: `unknown compile marker "${mode}" (module, fragment or same-as <path>)`,
      };
  }
}

function findClosingFence(lines: string[], from: number, fence: string): number {
  const closing = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
  for (let index = from; index < lines.length; index++) {
    if (closing.test(lines[index])) return index;
  }
  return -1;
}

function firstDifferentLine(block: string, source: string): number {
  const a = block.split('\n');
  const b = source.split('\n');
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  return at + 1;
}

function markerWithoutBlock(): string {
  return 'compile marker not followed directly by a ```ts fence (same-as: by any fence)';
}

function safeName(file: string): string {
  return file.replace(/[^A-Za-z0-9._-]+/g, '_');
}

function flatten(diagnostic: ts.Diagnostic): string {
  return ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
}

if (require.main === module) {
  const root = resolve(__dirname, '..');
  const files = process.argv.length > 2 ? process.argv.slice(2) : defaultMarkdownFiles(root);
  const { blocks, problems } = checkDocsTypeScript(root, files);
  for (const problem of problems) {
    console.error(`${problem.file}:${problem.line}: ${problem.message}`);
  }
  if (problems.length > 0) {
    console.error(`${problems.length} problem(s) in ${blocks.length} TypeScript block(s)`);
    process.exit(1);
  }
  console.log(`${blocks.length} TypeScript block(s) in ${files.length} file(s) compile`);
}
