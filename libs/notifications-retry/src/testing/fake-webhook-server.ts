import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedWebhookRequest {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  /** Lower-cased names, as node:http gives them. */
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** The answer to one request. 'hang' accepts the request and never answers. */
export type WebhookReply =
  | 'hang'
  | {
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      /** A string is sent as it is, anything else as JSON. */
      readonly body?: unknown;
      /** Answer this late (a slow provider). */
      readonly delayMs?: number;
      /** Send the status, headers and body but never end the body (an endless stream). */
      readonly keepOpen?: boolean;
    };

export type WebhookResponder = (request: RecordedWebhookRequest) => WebhookReply;

/**
 * A real HTTP server on 127.0.0.1 and a free port that plays the provider:
 * records every request and answers as scripted. For adapter tests that should
 * exercise the real HTTP client, sockets and signals rather than a mocked fetch.
 */
export class FakeWebhookServer {
  readonly requests: RecordedWebhookRequest[] = [];
  private responder: WebhookResponder = () => ({
    status: 200,
    body: { id: `fake-message-${this.requests.length}` },
  });
  private readonly server: Server;
  private readonly timers = new Set<NodeJS.Timeout>();
  private clientDisconnects = 0;
  private port = 0;

  private constructor() {
    this.server = createServer((request, response) => this.handle(request, response));
  }

  static async start(): Promise<FakeWebhookServer> {
    const fake = new FakeWebhookServer();
    await new Promise<void>((resolve, reject) => {
      fake.server.once('error', reject);
      fake.server.listen(0, '127.0.0.1', () => resolve());
    });
    fake.port = (fake.server.address() as AddressInfo).port;
    return fake;
  }

  /** Where the adapter should POST. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/webhook`;
  }

  /** Requests whose client went away before the answer was complete: an abort reached the socket. */
  get disconnectsBeforeReply(): number {
    return this.clientDisconnects;
  }

  respondWith(reply: WebhookReply | WebhookResponder): void {
    this.responder = typeof reply === 'function' ? reply : () => reply;
  }

  lastRequest(): RecordedWebhookRequest | undefined {
    return this.requests.at(-1);
  }

  /** Also drops the connections of requests still waiting for an answer. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    response.on('close', () => {
      if (!response.writableFinished) this.clientDisconnects++;
    });
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded: RecordedWebhookRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      this.requests.push(recorded);
      const reply = this.responder(recorded);
      if (reply === 'hang') return;
      if (reply.delayMs === undefined) {
        this.reply(response, reply);
        return;
      }
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.reply(response, reply);
      }, reply.delayMs);
      this.timers.add(timer);
    });
  }

  private reply(response: ServerResponse, reply: Exclude<WebhookReply, 'hang'>): void {
    if (response.destroyed) return;
    const headers: Record<string, string> = { ...reply.headers };
    let body = '';
    if (typeof reply.body === 'string') {
      body = reply.body;
    } else if (reply.body !== undefined) {
      body = JSON.stringify(reply.body);
      headers['content-type'] ??= 'application/json';
    }
    response.writeHead(reply.status, headers);
    if (reply.keepOpen) response.write(body);
    else response.end(body);
  }
}
