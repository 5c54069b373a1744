import type { ChannelConfig } from '../channels/channel-config';
import type { CircuitState } from '../circuit/circuit-state';
import { ChannelPacer } from './channel-pacer';
import { DispatchQueue, type QueuedRow } from './dispatch-queue';

interface Row extends QueuedRow {
  readonly id: string;
}

function channel(key: string, overrides: Partial<ChannelConfig> = {}): ChannelConfig {
  return {
    key,
    isEnabled: true,
    providerKey: `${key}-provider`,
    maxAttempts: 3,
    backoff: { kind: 'Fixed', baseMs: 1_000, jitter: false },
    timeoutMs: 1_000,
    rateLimitPerSec: null,
    maxConcurrency: null,
    ...overrides,
  };
}

const at = (ms: number): Date => new Date(1_800_000_000_000 + ms);
const row = (id: string, key: string, dueMs: number): Row => ({
  id,
  channel: key,
  dueAt: at(dueMs),
});

function queue(
  channels: ChannelConfig[],
  circuits: Record<string, CircuitState> = {},
): DispatchQueue<Row> {
  return new DispatchQueue<Row>(
    new Map(channels.map((c) => [c.key, c])),
    new ChannelPacer(),
    (providerKey) => circuits[providerKey] ?? 'closed',
  );
}

function drain(q: DispatchQueue<Row>, nowMs = 0): string[] {
  const ids: string[] = [];
  for (let decision = q.next(nowMs); decision.kind === 'row'; decision = q.next(nowMs)) {
    ids.push(decision.row.id);
  }
  return ids;
}

describe('DispatchQueue', () => {
  it('hands rows out oldest due first across channels', () => {
    const q = queue([channel('email'), channel('sms')]);
    q.add([row('e1', 'email', 10), row('e2', 'email', 30), row('s1', 'sms', 20)]);
    expect(drain(q)).toEqual(['e1', 's1', 'e2']);
    expect(q.next(0)).toEqual({ kind: 'empty' });
  });

  it('hands out rows due at the same moment in the order their channels were first queued', () => {
    const q = queue([channel('email'), channel('sms')]);
    q.add([row('s1', 'sms', 10), row('e1', 'email', 10), row('s2', 'sms', 20)]);
    q.add([row('e2', 'email', 20)]);
    expect(drain(q)).toEqual(['s1', 'e1', 's2', 'e2']);
  });

  it('passes over a channel at its max_concurrency until one of its rows is done', () => {
    const q = queue([channel('sms', { maxConcurrency: 1 }), channel('email')]);
    const first = row('s1', 'sms', 1);
    q.add([first, row('s2', 'sms', 2), row('e1', 'email', 3)]);
    expect(drain(q)).toEqual(['s1', 'e1']);
    expect(q.next(0)).toEqual({ kind: 'wait', waitMs: Number.POSITIVE_INFINITY });
    expect(q.held('sms')).toBe(2);
    q.done(first);
    expect(drain(q)).toEqual(['s2']);
  });

  it('lets one probe through a half-open circuit at a time', () => {
    const circuits: Record<string, CircuitState> = { 'sms-provider': 'half-open' };
    const q = queue([channel('sms')], circuits);
    const probe = row('s1', 'sms', 1);
    q.add([probe, row('s2', 'sms', 2)]);
    expect(drain(q)).toEqual(['s1']);
    expect(q.inFlightFor('sms-provider')).toBe(1);
    // The probe done, the next one may go.
    q.done(probe);
    expect(q.inFlightFor('sms-provider')).toBe(0);
    expect(drain(q)).toEqual(['s2']);
  });

  it('takes out the rows of a provider whose circuit opened, to be handed back', () => {
    const circuits: Record<string, CircuitState> = {};
    const q = queue([channel('sms'), channel('email')], circuits);
    q.add([row('s1', 'sms', 1), row('s2', 'sms', 2), row('e1', 'email', 3)]);
    circuits['sms-provider'] = 'open';
    expect(drain(q)).toEqual(['e1']);
    expect(q.takeDropped().map((r) => r.id)).toEqual(['s1', 's2']);
    expect(q.size).toBe(0);
  });

  it('spaces a rate-limited channel and says how long to wait', () => {
    const q = queue([channel('sms', { rateLimitPerSec: 2 })]);
    q.add([row('s1', 'sms', 1), row('s2', 'sms', 2)]);
    expect(drain(q, 0)).toEqual(['s1']);
    const decision = q.next(100);
    expect(decision).toEqual({ kind: 'wait', waitMs: 401 });
    expect(drain(q, 501)).toEqual(['s2']);
  });

  it('gives every row still waiting back when the cycle stops', () => {
    const q = queue([channel('sms', { maxConcurrency: 1 })]);
    q.add([row('s1', 'sms', 1), row('s2', 'sms', 2), row('s3', 'sms', 3)]);
    drain(q);
    expect(q.takeAll().map((r) => r.id)).toEqual(['s2', 's3']);
    expect(q.size).toBe(0);
    // Handed back, they are no longer the queue's: not waiting, not handed back twice.
    expect(q.waiting('sms')).toBe(0);
    expect(q.held('sms')).toBe(1);
    expect(q.takeAll()).toEqual([]);
  });
});
