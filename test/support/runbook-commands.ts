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
}

const STEP_BLOCK = /<!-- rehearsal:([a-z-]+) -->\s*```sh\n([\s\S]*?)```/g;
const VARIABLE = /^([A-Z_]+)=("[^"]*"|\S+)/gm;
const OPS_PREFIX = 'npm run ops -- ';

export function readRunbook(name: string): RunbookCommands {
  const text = readFileSync(join(__dirname, '..', '..', 'docs', 'runbooks', name), 'utf8');
  // The values the runbook tells the operator to set, from its first sh block.
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(text)?.[1] ?? '';
  const variables = new Map<string, string>();
  for (const match of firstBlock.matchAll(VARIABLE)) {
    variables.set(match[1], match[2].replace(/^"|"$/g, ''));
  }
  const steps = new Map<string, string[]>();
  for (const match of text.matchAll(STEP_BLOCK)) {
    const lines = match[2]
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    steps.set(match[1], lines);
  }
  const lines = (step: string): string[] => {
    const found = steps.get(step);
    if (!found) throw new Error(`${name} has no rehearsal step "${step}"`);
    return found;
  };
  return {
    steps: [...steps.keys()],
    lines,
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
