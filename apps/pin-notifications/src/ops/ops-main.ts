import 'reflect-metadata';
import { runPinOps } from './run-pin-ops';

// `npm run ops -- <command>` (ts-node) or `node dist/apps/pin-notifications/src/ops/ops-main.js <command>`.
runPinOps(process.argv.slice(2), { env: process.env }).then(
  (code) => process.stdout.write('', () => process.exit(code)),
  (error: unknown) => {
    process.stderr.write(`ops: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
