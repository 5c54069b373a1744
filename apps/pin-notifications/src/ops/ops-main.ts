import 'reflect-metadata';
import { runOps } from './run-ops';

// `npm run ops -- <command>` (ts-node) or `node dist/apps/pin-notifications/src/ops/ops-main.js <command>`.
runOps(
  process.argv.slice(2),
  { env: process.env },
  {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
  },
).then(
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    process.stderr.write(`ops: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
