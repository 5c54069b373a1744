import { Client, type QueryConfig } from 'pg';

// The settle statement's first array of row ids, as the library sends it (an array literal).
const ID_ARRAY_LITERAL = /^\{"[0-9a-f-]{36}"(?:,"[0-9a-f-]{36}")*\}$/i;

/** Rows a settle statement's values carry: the length of its id array. */
function rowsOf(values: readonly unknown[] | undefined): number {
  const ids = values?.find((value) => typeof value === 'string' && ID_ARRAY_LITERAL.test(value));
  return typeof ids === 'string' ? ids.split(',').length : 0;
}

/**
 * Rows per settle statement sent while `run` runs (observed, not altered: a
 * spy calls through). `also` matches statements by text besides the prepared
 * settle statement's name (the unnamed form of it, say).
 */
export async function settleGroups(run: () => Promise<unknown>, also?: RegExp): Promise<number[]> {
  const spy = jest.spyOn(Client.prototype, 'query');
  try {
    await run();
    return spy.mock.calls
      .map(([config]: unknown[]) => config as QueryConfig)
      .filter(
        (config) =>
          typeof config === 'object' &&
          (/nr_settle_rows/.test(config.name ?? '') || (also?.test(config.text) ?? false)),
      )
      .map((config) => rowsOf(config.values));
  } finally {
    spy.mockRestore();
  }
}
