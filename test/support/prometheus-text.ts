/** One sample line of the Prometheus text exposition format. */
export interface PromSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A parsed scrape of `/metrics`. */
export interface PromScrape {
  readonly text: string;
  readonly samples: readonly PromSample[];
  /** `# TYPE` of each metric family. */
  readonly types: ReadonlyMap<string, string>;
  /** Samples of `name` whose labels include every one of `labels`. */
  find(name: string, labels?: Record<string, string>): PromSample[];
  /** Sum of those samples; 0 when there are none (a labelled counter not incremented yet). */
  value(name: string, labels?: Record<string, string>): number;
}

/** GET /metrics over HTTP and parse it; fails on anything but a 200 in the text format. */
export async function scrapeMetrics(baseUrl: string): Promise<PromScrape> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
  const contentType = response.headers.get('content-type') ?? '';
  if (!contentType.startsWith('text/plain')) {
    throw new Error(`GET /metrics answered content-type ${contentType}`);
  }
  return parsePrometheusText(await response.text());
}

export function parsePrometheusText(text: string): PromScrape {
  const samples: PromSample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types.set(type[1], type[2]);
      continue;
    }
    samples.push(parseSample(line));
  }
  const find = (name: string, labels: Record<string, string> = {}): PromSample[] =>
    samples.filter(
      (sample) =>
        sample.name === name &&
        Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    );
  return {
    text,
    samples,
    types,
    find,
    value: (name, labels) => find(name, labels).reduce((sum, sample) => sum + sample.value, 0),
  };
}

function parseSample(line: string): PromSample {
  const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
  if (!name) throw new Error(`not a sample line: ${line}`);
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    let i = 1;
    while (rest[i] !== '}') {
      const key = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(rest.slice(i))?.[0];
      if (!key || rest[i + key.length] !== '=' || rest[i + key.length + 1] !== '"') {
        throw new Error(`bad labels in: ${line}`);
      }
      i += key.length + 2;
      let value = '';
      while (rest[i] !== '"') {
        if (i >= rest.length) throw new Error(`unterminated label value in: ${line}`);
        if (rest[i] === '\\') {
          const next = rest[i + 1];
          value += next === 'n' ? '\n' : next;
          i += 2;
        } else {
          value += rest[i++];
        }
      }
      labels[key] = value;
      i++;
      if (rest[i] === ',') i++;
    }
    rest = rest.slice(i + 1);
  }
  const [rawValue] = rest.trim().split(/\s+/);
  const value =
    rawValue === '+Inf'
      ? Number.POSITIVE_INFINITY
      : rawValue === '-Inf'
        ? Number.NEGATIVE_INFINITY
        : Number(rawValue);
  // prom-client writes NaN as "Nan".
  if (rawValue === undefined || (Number.isNaN(value) && rawValue.toLowerCase() !== 'nan')) {
    throw new Error(`bad sample value in: ${line}`);
  }
  return { name, labels, value };
}
