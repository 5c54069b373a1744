import { arrayLiteral } from '../libs/notifications-retry/src/persistence/sql/array-literal';
import { jsonArray } from '../libs/notifications-retry/src/persistence/sql/json-array';
import { useRetryDatabase } from './support/retry-test-app';

/**
 * The settle statement's arrays are sent as literals the library builds
 * (persistence/sql/array-literal.ts, json-array.ts), not as JS arrays `pg`
 * encodes: what PostgreSQL reads back from them must be exactly what went in.
 */
describe('array literals for the settle statement (real PostgreSQL)', () => {
  const t = useRetryDatabase();

  async function readBack<T>(type: string, literal: string): Promise<T[]> {
    const [row] = await t.ds.query<Array<{ a: T[] }>>(`SELECT $1::${type}[] AS a`, [literal]);
    return row.a;
  }

  it('keeps every text as it was: quotes, backslashes, braces, commas, spaces, the word NULL, empty, non-ASCII', async () => {
    const texts = [
      'plain',
      'a "quoted" word',
      'C:\\build\\out',
      '\\"',
      '{braces},and,commas',
      '  leading and trailing  ',
      'NULL',
      'null',
      '',
      'line\nbreak\ttab',
      'Привет, ünïcödé 🙂',
      '{"to":"x","n":1}',
    ];
    expect(await readBack<string>('text', arrayLiteral([...texts, null]))).toEqual([
      ...texts,
      null,
    ]);
  });

  it('reads numbers, uuids and instants as they were, and null or undefined as NULL', async () => {
    expect(await readBack<number>('int', arrayLiteral([0, 3, -7, 2147483647, null]))).toEqual([
      0,
      3,
      -7,
      2147483647,
      null,
    ]);
    const ids = ['6f1d2c3b-0000-4000-8000-000000000001', '6F1D2C3B-0000-4000-8000-000000000002'];
    expect(await readBack<string>('uuid', arrayLiteral([...ids, undefined]))).toEqual([
      ids[0],
      ids[1].toLowerCase(),
      null,
    ]);
    const instants = [
      new Date('2026-12-02T16:05:48.123Z'),
      new Date(0),
      new Date('1999-12-31T23:59:59.999Z'),
    ];
    const read = await readBack<Date>('timestamptz', arrayLiteral([...instants, null]));
    expect(read.map((d) => d?.getTime() ?? null)).toEqual([
      ...instants.map((d) => d.getTime()),
      null,
    ]);
  });

  it('gives an empty array for no rows', async () => {
    expect(await readBack<string>('text', arrayLiteral([]))).toEqual([]);
  });

  it('sends a number that is not finite as text, so a numeric array refuses it', async () => {
    await expect(readBack<number>('int', arrayLiteral([Number.NaN]))).rejects.toThrow(
      /invalid input syntax/,
    );
  });

  it('reads each JSON text of a JSON array back as the value it was, by index as the statement does, and null as JSON null', async () => {
    const values = [
      { to: 'a "quoted" word', path: 'C:\\build', text: 'Привет 🙂\nnext line' },
      [1, 'two', { three: null }],
      'a string',
      42,
    ];
    const texts = [...values.map((value) => JSON.stringify(value)), null];
    const rows = await t.ds.query<Array<{ value: unknown; kind: string }>>(
      `SELECT $1::jsonb -> (i - 1) AS value, jsonb_typeof($1::jsonb -> (i - 1)) AS kind
         FROM generate_series(1, $2::int) AS i ORDER BY i`,
      [jsonArray(texts), texts.length],
    );
    expect(rows.map((row) => row.value)).toEqual([...values, null]);
    expect(rows[texts.length - 1].kind).toBe('null');
  });

  it('gives an empty JSON array for no rows', async () => {
    const [row] = await t.ds.query<Array<{ n: number }>>(
      'SELECT jsonb_array_length($1::jsonb) AS n',
      [jsonArray([])],
    );
    expect(row.n).toBe(0);
  });
});
