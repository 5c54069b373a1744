import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, nanos, type MsgHdrs, type NatsConnection, type StreamInfo } from 'nats';
import { findFreePort } from '../../src/database/free-port';
import { installedBinary } from './installed-binary';

export interface RunningNatsServer {
  /** nats://127.0.0.1:<port>: a port of its own, never the machine's 4222. */
  readonly url: string;
  readonly port: number;
  /** Kills the server (SIGKILL: an outage, not a clean stop); its store stays for `start()`. */
  kill(): Promise<void>;
  /** Starts it again on the same port and store: streams and their messages are back. */
  start(): Promise<void>;
  /** Stops it and removes its store. */
  stop(): Promise<void>;
  log(): string;
}

const START_TIMEOUT_MS = 20_000;

/** Debian's `nats-server` (scripts/install-test-tools.sh installs it when missing). */
export function natsServerBinary(): string {
  return installedBinary(
    'nats-server',
    ['/usr/sbin', '/usr/bin'],
    'nats-server is not installed: `apt-get install nats-server` (Debian; npm test installs it when missing)',
  );
}

/**
 * A `nats-server -js` of its own on a free port, its JetStream store in a
 * fresh temp directory. `maxPayload` sets the server's max_payload (a config
 * file, the flag does not exist), for the too-large-message case.
 */
export async function startNatsServer(
  options: { maxPayload?: number } = {},
): Promise<RunningNatsServer> {
  const binary = natsServerBinary();
  const dir = await mkdtemp(join(tmpdir(), 'pin-nats-'));
  const config = join(dir, 'nats.conf');
  let output = '';
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let port = 0;

  const launch = async (): Promise<boolean> => {
    await writeFile(
      config,
      [
        `listen: 127.0.0.1:${port}`,
        `jetstream { store_dir: ${JSON.stringify(join(dir, 'store'))} }`,
        ...(options.maxPayload ? [`max_payload: ${options.maxPayload}`] : []),
        '',
      ].join('\n'),
    );
    const proc = spawn(binary, ['-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = proc;
    proc.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    proc.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    const up = await waitForPort(port, () => proc.exitCode === null && proc.signalCode === null);
    if (!up) proc.kill('SIGKILL');
    return up;
  };

  let started = false;
  for (let attempt = 0; attempt < 5 && !started; attempt++) {
    port = await findFreePort();
    started = await launch();
    if (!started && !/address already in use/i.test(output)) break;
  }
  if (!started) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`nats-server did not start:\n${output}`);
  }

  const kill = async (): Promise<void> => {
    const proc = child;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGKILL');
      await exited;
    }
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    log: () => output,
    kill,
    start: async () => {
      const proc: ChildProcess | null = child;
      if (proc && proc.exitCode === null && proc.signalCode === null) return; // still running
      if (!(await launch())) throw new Error(`nats-server did not start again:\n${output}`);
    },
    stop: async () => {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Creates a stream capturing `subjects`, with a duplicate window of two minutes unless given. */
export async function addStream(
  url: string,
  name: string,
  subjects: string[],
  duplicateWindowMs = 120_000,
): Promise<void> {
  await withConnection(url, async (nc) => {
    const manager = await nc.jetstreamManager();
    await manager.streams.add({ name, subjects, duplicate_window: nanos(duplicateWindowMs) });
  });
}

/** Deletes a stream: the broker then answers a publish on its subjects with no PubAck. */
export async function deleteStream(url: string, name: string): Promise<void> {
  await withConnection(url, async (nc) => {
    await (await nc.jetstreamManager()).streams.delete(name);
  });
}

/** The stream as the broker has it (config and state). */
export async function streamInfo(url: string, name: string): Promise<StreamInfo> {
  return withConnection(url, async (nc) => (await nc.jetstreamManager()).streams.info(name));
}

export interface ConsumedMessage {
  readonly seq: number;
  readonly subject: string;
  readonly msgId: string | undefined;
  readonly headers: MsgHdrs | undefined;
  readonly payload: unknown;
}

/**
 * Everything in the stream as a JetStream consumer receives it: an ordered
 * consumer from the first message, fetched until the stream's last sequence.
 */
export async function consumeStream(url: string, stream: string): Promise<ConsumedMessage[]> {
  return withConnection(url, async (nc) => {
    const manager = await nc.jetstreamManager();
    const info = await manager.streams.info(stream);
    const total = info.state.messages;
    const received: ConsumedMessage[] = [];
    if (total === 0) return received;
    const consumer = await nc.jetstream().consumers.get(stream);
    while (received.length < total) {
      const batch = await consumer.fetch({ max_messages: total - received.length, expires: 2_000 });
      let got = 0;
      for await (const message of batch) {
        got++;
        received.push({
          seq: message.seq,
          subject: message.subject,
          msgId: message.headers?.get('Nats-Msg-Id') || undefined,
          headers: message.headers,
          payload: message.json(),
        });
      }
      if (got === 0) break;
    }
    return received;
  });
}

async function withConnection<T>(url: string, use: (nc: NatsConnection) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: url, timeout: 5_000 });
  try {
    return await use(nc);
  } finally {
    await nc.close();
  }
}

async function waitForPort(port: number, alive: () => boolean): Promise<boolean> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline && alive()) {
    const accepting = await new Promise<boolean>((resolve) => {
      const socket = tcpConnect({ host: '127.0.0.1', port });
      const done = (ok: boolean): void => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(1_000, () => done(false));
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
    });
    if (accepting) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}
