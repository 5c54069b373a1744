/** Where a CPU sample of our process was spent, in the order the rules try them. */
export const CATEGORIES = [
  'spans',
  'metrics',
  'log line',
  'privacy',
  'claim',
  'queue',
  'call wrapper',
  'settle',
  'fake provider',
  'pg driver',
  'promise jobs',
  'garbage collector',
  'idle',
  'other',
] as const;
export type Category = (typeof CATEGORIES)[number];

/** The part of a V8 CPU profile (`Profiler.Profile`) the classifier reads. */
export interface ProfileFrame {
  readonly functionName: string;
  readonly url: string;
}
export interface ProfileNode {
  readonly id: number;
  readonly callFrame: ProfileFrame;
  readonly children?: readonly number[];
}
export interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples?: readonly number[];
}

interface Rule {
  readonly category: Category;
  /** Matches a frame whose script URL contains one of these. */
  readonly urls?: readonly string[];
  /** Matches a frame of V8's own (no script) by its name. */
  readonly functions?: readonly string[];
}

const CYCLE = 'libs/notifications-retry/src/cycle/';
const LIB = 'libs/notifications-retry/src/';

const RULES: readonly Rule[] = [
  { category: 'spans', urls: ['@opentelemetry'] },
  { category: 'metrics', urls: ['prom-client', `${LIB}observability/retry-metrics`] },
  {
    category: 'log line',
    urls: [
      `${CYCLE}cycle-reporter`,
      '@nestjs/common/services/logger',
      'test/bench/counting-logger',
    ],
  },
  { category: 'privacy', urls: [`${LIB}privacy/`] },
  {
    category: 'claim',
    urls: [
      `${CYCLE}due-row-claimer`,
      `${CYCLE}claim-planner`,
      `${LIB}persistence/sql/claim-due-rows`,
    ],
  },
  {
    category: 'queue',
    urls: [`${CYCLE}dispatch-queue`, `${CYCLE}retry-cycle.service`, `${CYCLE}channel-pacer`],
  },
  {
    category: 'call wrapper',
    urls: [
      `${CYCLE}provider-caller`,
      `${CYCLE}attempt-delivery`,
      `${LIB}circuit/`,
      '/node_modules/opossum/',
      `${CYCLE}provider-calls-in-flight`,
    ],
  },
  {
    category: 'settle',
    urls: [
      `${CYCLE}settle-row`,
      `${CYCLE}row-transition`,
      `${CYCLE}outcome-writer`,
      `${LIB}outbox/outbox.writer`,
      `${CYCLE}attempt-record`,
      `${CYCLE}row-runner`,
    ],
  },
  { category: 'fake provider', urls: ['test/bench/fake-provider'] },
  {
    category: 'pg driver',
    urls: [
      '/node_modules/pg/',
      '/node_modules/pg-pool/',
      '/node_modules/pg-protocol/',
      '/node_modules/pg-types/',
      '/node_modules/postgres-array/',
      '/node_modules/postgres-date/',
      // The process's only sockets are PostgreSQL's: their writes and reads are the driver's.
      'node:net',
      'node:internal/stream_base_commons',
    ],
  },
  // V8 running the microtask queue between the callbacks (every await resumes through it), and
  // Node's loop over it: the cost of the promises themselves, which no caller's frame is on.
  {
    category: 'promise jobs',
    functions: ['runMicrotasks'],
    urls: ['node:internal/process/task_queues'],
  },
  { category: 'garbage collector', functions: ['(garbage collector)'] },
  { category: 'idle', functions: ['(idle)'] },
];

/** The category of one frame, or null if no rule names it. */
export function frameCategory(frame: ProfileFrame): Category | null {
  for (const rule of RULES) {
    if (rule.urls?.some((url) => frame.url.includes(url))) return rule.category;
    if (frame.url === '' && rule.functions?.includes(frame.functionName)) return rule.category;
  }
  return null;
}

export interface ProfileBreakdown {
  /** Samples per category, every category present. */
  readonly samples: ReadonlyMap<Category, number>;
  readonly total: number;
  /** Leaf frames of the samples classed `other`, most frequent first: where a rule is missing. */
  readonly uncategorised: ReadonlyArray<{ readonly frame: string; readonly samples: number }>;
}

/**
 * Classes every sample by its stack, leaf first: the first frame any rule
 * names gives the category, the rules tried in their order. So time in the pg
 * driver under a settle statement is the driver's, and a TypeORM frame under
 * the claim is the claim's.
 */
export function classifyProfile(profile: CpuProfile): ProfileBreakdown {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const categoryOf = new Map<number, Category>();
  const classify = (id: number): Category => {
    const known = categoryOf.get(id);
    if (known) return known;
    let category: Category = 'other';
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const node = byId.get(at);
      const found = node ? frameCategory(node.callFrame) : null;
      if (found) {
        category = found;
        break;
      }
    }
    categoryOf.set(id, category);
    return category;
  };
  const samples = new Map<Category, number>(CATEGORIES.map((c) => [c, 0]));
  const uncategorised = new Map<string, number>();
  const ids = profile.samples ?? [];
  for (const id of ids) {
    const category = classify(id);
    samples.set(category, (samples.get(category) ?? 0) + 1);
    if (category === 'other') {
      const frame = describeFrame(byId.get(id)?.callFrame);
      uncategorised.set(frame, (uncategorised.get(frame) ?? 0) + 1);
    }
  }
  return {
    samples,
    total: ids.length,
    uncategorised: [...uncategorised]
      .map(([frame, count]) => ({ frame, samples: count }))
      .sort((a, b) => b.samples - a.samples),
  };
}

function describeFrame(frame: ProfileFrame | undefined): string {
  if (!frame) return '(unknown node)';
  const url = frame.url
    .replace(/^file:\/\//, '')
    .replace(/^.*?\/(node_modules|libs|test|src)\//, '$1/');
  return `${frame.functionName || '(anonymous)'}${url ? ` ${url}` : ''}`;
}
