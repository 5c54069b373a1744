import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { shellWords } from './ops-cli';

/** A runbook's ops commands, as printed, grouped by the `<!-- rehearsal:STEP -->` mark before their block. */
export interface RunbookCommands {
  /** The command lines of a step, exactly as the runbook prints them. */
  lines(step: string): string[];
  /** The same, as `runOps` argv: after `npm run ops --`, the runbook's own variables expanded. */
  argv(step: string): string[][];
  readonly steps: readonly string[];
  /** A value the runbook tells the operator to set in its first block (`CHANNEL=email`). */
  variable(name: string): string;
  /** The sample output the runbook prints for a step: the block after `<!-- rehearsal-output:STEP -->`. */
  sampleOutput(step: string): string;
  /** Ops commands printed in a sh block of the runbook that no rehearsal step runs. */
  unrehearsed(): string[];
}

const STEP_BLOCK = /<!-- rehearsal:([a-z-]+) -->\s*```sh\n([\s\S]*?)```/g;
const OUTPUT_BLOCK = /<!-- rehearsal-output:([a-z-]+) -->\s*```text\n([\s\S]*?)```/g;
const SH_BLOCK = /```sh\n([\s\S]*?)```/g;
const VARIABLE = /^([A-Z_]+)=("[^"]*"|\S+)/gm;
const OPS_PREFIX = 'npm run ops -- ';

const commandLines = (block: string): string[] =>
  block
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

export function readRunbook(name: string): RunbookCommands {
  const text = readFileSync(join(__dirname, '..', '..', 'docs', 'runbooks', name), 'utf8');
  // The values the runbook tells the operator to set, from its first sh block.
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
  const variables = new Map<string, string>();
  for (const match of firstBlock.matchAll(VARIABLE)) {
    variables.set(match[1], match[2].replace(/^"|"$/g, ''));
  }
  const steps = new Map<string, string[]>();
  for (const match of text.matchAll(STEP_BLOCK)) steps.set(match[1], commandLines(match[2]));
  const outputs = new Map<string, string>();
  for (const match of text.matchAll(OUTPUT_BLOCK)) outputs.set(match[1], match[2]);
  const lines = (step: string): string[] => {
    const found = steps.get(step);
    if (!found) throw new Error(`${name} has no rehearsal step "${step}"`);
    return found;
  };
  const rehearsed = new Set([...steps.values()].flat());
  return {
    steps: [...steps.keys()],
    lines,
    variable: (variable) => {
      const value = variables.get(variable);
      if (value === undefined) throw new Error(`${name} never sets ${variable}`);
      return value;
    },
    sampleOutput: (step) => {
      const found = outputs.get(step);
      if (found === undefined && !process.env.SHOW_REHEARSAL) {
        throw new Error(`${name} prints no sample output for "${step}"`);
      }
      return found ?? '';
    },
    unrehearsed: () =>
      [...text.matchAll(SH_BLOCK)]
        .flatMap((match) => commandLines(match[1]))
        .filter((line) => line.startsWith(OPS_PREFIX) && !rehearsed.has(line)),
    argv: (step) =>
      lines(step).map((line) => {
        if (!line.startsWith(OPS_PREFIX))
          throw new Error(`${name} ${step}: not an ops command: ${line}`);
        return shellWords(line.slice(OPS_PREFIX.length)).map((word) =>
          word.replace(/\$([A-Z_]+)/g, (_, variable: string) => {
            const value = variables.get(variable);
            if (value === undefined) throw new Error(`${name} ${step}: $${variable} is never set`);
            return value;
          }),
        );
      }),
  };
}
