import { classifyProfile, frameCategory, type CpuProfile } from './profile-categories';

const root = '/work/project/';
const frame = (functionName: string, url: string) => ({ functionName, url });

/**
 * A hand-made profile: (root) → runCycle (retry-cycle.service) → settle
 * (settle-row) → pg's query → the socket's write; a metrics call under the
 * settle; a span under a claim; the fake provider; a frame no rule names;
 * V8's idle, GC and microtask nodes.
 */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)', ''), children: [2, 9, 10, 11, 12, 13] },
    {
      id: 2,
      callFrame: frame(
        'runCycle',
        `file://${root}libs/notifications-retry/src/cycle/retry-cycle.service.ts`,
      ),
      children: [3, 7],
    },
    {
      id: 3,
      callFrame: frame('settle', `file://${root}libs/notifications-retry/src/cycle/settle-row.ts`),
      children: [4, 6],
    },
    {
      id: 4,
      callFrame: frame('query', `file://${root}node_modules/pg/lib/client.js`),
      children: [5],
    },
    { id: 5, callFrame: frame('writevGeneric', 'node:internal/stream_base_commons') },
    { id: 6, callFrame: frame('inc', `file://${root}node_modules/prom-client/lib/counter.js`) },
    {
      id: 7,
      callFrame: frame(
        'claim',
        `file://${root}libs/notifications-retry/src/cycle/due-row-claimer.ts`,
      ),
      children: [8],
    },
    {
      id: 8,
      callFrame: frame(
        'startSpan',
        `file://${root}node_modules/@opentelemetry/api/build/src/trace.js`,
      ),
    },
    { id: 9, callFrame: frame('send', `file://${root}test/bench/fake-provider.ts`) },
    {
      id: 10,
      callFrame: frame('somethingElse', `file://${root}node_modules/rxjs/dist/cjs/index.js`),
    },
    { id: 11, callFrame: frame('(idle)', '') },
    { id: 12, callFrame: frame('(garbage collector)', '') },
    { id: 13, callFrame: frame('runMicrotasks', '') },
  ],
  samples: [3, 3, 4, 5, 6, 8, 7, 2, 9, 10, 11, 11, 11, 12, 13],
};

describe('CPU profile categories', () => {
  it('classes each sample by the first frame a rule names, leaf first', () => {
    const { samples, total } = classifyProfile(profile);
    expect(total).toBe(15);
    expect(Object.fromEntries([...samples].filter(([, n]) => n > 0))).toEqual({
      // The settle's own frames; the driver's and the socket's under it are the driver's.
      settle: 2,
      'pg driver': 2,
      // prom-client under the settle, a span under the claim: the leaf's part wins.
      metrics: 1,
      spans: 1,
      claim: 1,
      queue: 1,
      'fake provider': 1,
      other: 1,
      idle: 3,
      'promise jobs': 1,
      'garbage collector': 1,
    });
  });

  it('lists the frames no rule names, most frequent first', () => {
    expect(classifyProfile(profile).uncategorised).toEqual([
      { frame: 'somethingElse node_modules/rxjs/dist/cjs/index.js', samples: 1 },
    ]);
  });

  it("tells pg's own modules from other packages whose names start with pg", () => {
    expect(frameCategory(frame('q', `${root}node_modules/pg-boss/dist/index.js`))).toBeNull();
    expect(frameCategory(frame('parse', `${root}node_modules/pg-protocol/dist/parser.js`))).toBe(
      'pg driver',
    );
    expect(frameCategory(frame('log', `${root}test/bench/counting-logger.ts`))).toBe('log line');
    expect(
      frameCategory(frame('mask', `${root}libs/notifications-retry/src/privacy/mask.ts`)),
    ).toBe('privacy');
  });

  it('has no samples for an empty profile', () => {
    const { samples, total } = classifyProfile({ nodes: [], samples: [] });
    expect(total).toBe(0);
    expect([...samples.values()].every((n) => n === 0)).toBe(true);
  });
});
