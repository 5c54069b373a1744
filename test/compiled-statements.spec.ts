import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource, EntityTarget, ObjectLiteral, QueryRunner } from 'typeorm';
import { DistributedLockEntity } from '../libs/notifications-retry/src/persistence/distributed-lock.entity';
import { NotificationChannelPauseEntity } from '../libs/notifications-retry/src/persistence/notification-channel-pause.entity';
import { NotificationOutboxEntity } from '../libs/notifications-retry/src/persistence/notification-outbox.entity';
import { NotificationOperatorActionEntity } from '../libs/notifications-retry/src/persistence/notification-operator-action.entity';
import { NotificationRedrivenRowEntity } from '../libs/notifications-retry/src/persistence/notification-redriven-row.entity';
import { NotificationOperatorActionRowEntity } from '../libs/notifications-retry/src/persistence/notification-operator-action-row.entity';
import { NotificationChannelEntity } from '../libs/notifications-retry/src/persistence/notification-channel.entity';
import { NotificationRetryCycleEntity } from '../libs/notifications-retry/src/persistence/notification-retry-cycle.entity';
import { NotificationEntity } from '../libs/notifications-retry/src/persistence/notification.entity';
import type { BoundStatement } from '../libs/notifications-retry/src/persistence/sql/sql-statement';
import { createMigratedDatabase, type TestDatabase } from './support/test-database';

/** The folders of statements compiled from the entities outside the cycle's persistence/sql/. */
const STATEMENT_DIRS = ['operations/sql', 'outbox/sql'].map((dir) =>
  join(__dirname, '../libs/notifications-retry/src', dir),
);
/** Fragments shared by several statements, not statements of their own. */
const FRAGMENT_FILES = new Set(['terminal-filter.sql.ts']);

function statementFiles(): string[] {
  return STATEMENT_DIRS.flatMap((dir) =>
    readdirSync(dir)
      .filter((file) => file.endsWith('.sql.ts') && !FRAGMENT_FILES.has(file))
      .map((file) => join(dir, file)),
  ).sort();
}

type Compiler = (dataSource: DataSource) => BoundStatement<string>;

/** Every `compileXxx` of those folders, found by reading them: a new statement is checked without listing it here. */
function compilers(): Array<{ file: string; name: string; compile: Compiler }> {
  return statementFiles().flatMap((file) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const exports = require(file) as Record<string, unknown>;
    return Object.entries(exports)
      .filter(([name, value]) => name.startsWith('compile') && typeof value === 'function')
      .map(([name, value]) => ({ file, name, compile: value as Compiler }));
  });
}

/** Highest `$k` of a text: the parameter count PREPARE must infer types for. */
function placeholderCount(text: string): number {
  return Math.max(0, ...[...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));
}

/** PREPAREs every statement on `runner`'s connection (parse, name resolution, typing, planning); returns the failures. */
async function prepareAll(runner: QueryRunner, dataSource: DataSource): Promise<string[]> {
  const failures: string[] = [];
  for (const [index, { name, compile }] of compilers().entries()) {
    const statement = compile(dataSource);
    const ok = `sp_${index}`;
    await runner.query(`SAVEPOINT ${ok}`);
    try {
      await runner.query(`PREPARE ops_sql_check_${index} AS ${statement.text}`);
      await runner.query(`DEALLOCATE ops_sql_check_${index}`);
      await runner.query(`RELEASE SAVEPOINT ${ok}`);
    } catch (error) {
      await runner.query(`ROLLBACK TO SAVEPOINT ${ok}`);
      failures.push(`${name}: ${(error as Error).message}`);
    }
  }
  return failures;
}

/** The entities those statements read and write. */
const OPERATIONS_ENTITIES: Array<EntityTarget<ObjectLiteral>> = [
  NotificationEntity,
  NotificationChannelPauseEntity,
  NotificationOperatorActionEntity,
  NotificationRedrivenRowEntity,
  DistributedLockEntity,
  NotificationOutboxEntity,
  NotificationOperatorActionRowEntity,
  NotificationChannelEntity,
  NotificationRetryCycleEntity,
];

describe('operations and outbox SQL: compiled from the entities (real PostgreSQL)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;

  beforeAll(async () => {
    ({ db, dataSource } = await createMigratedDatabase());
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  it('finds one compiler in each statement file', () => {
    const found = compilers();
    expect(found.map((c) => c.file)).toEqual(statementFiles());
    expect(found.length).toBeGreaterThan(0);
  });

  it('binds as many values as each statement has placeholders', () => {
    for (const { name, compile } of compilers()) {
      const statement = compile(dataSource);
      const bound = statement.values({});
      expect({ name, count: bound.length }).toEqual({
        name,
        count: placeholderCount(statement.text),
      });
    }
  });

  it('every statement prepares on the migrated schema: no table or column it names is missing', async () => {
    const runner = dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      expect(await prepareAll(runner, dataSource)).toEqual([]);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  });

  it('a table or column renamed in the schema and in its entity only still prepares every statement: no name is written twice', async () => {
    const runner = dataSource.createQueryRunner();
    const failures: string[] = [];
    try {
      for (const entity of OPERATIONS_ENTITIES) {
        const metadata = dataSource.getMetadata(entity);
        const table = metadata.tableName;
        const renames: Array<{ what: string; sql: string; apply(): void; undo(): void }> = [
          {
            what: `table ${table}`,
            sql: `ALTER TABLE "${table}" RENAME TO "${table}_renamed"`,
            apply: () => (metadata.tableName = `${table}_renamed`),
            undo: () => (metadata.tableName = table),
          },
          ...metadata.columns.map((column) => {
            const name = column.databaseName;
            return {
              what: `${table}.${name}`,
              sql: `ALTER TABLE "${table}" RENAME COLUMN "${name}" TO "${name}_renamed"`,
              apply: () => (column.databaseName = `${name}_renamed`),
              undo: () => (column.databaseName = name),
            };
          }),
        ];
        for (const rename of renames) {
          await runner.startTransaction();
          try {
            await runner.query(rename.sql);
            rename.apply();
            const failed = await prepareAll(runner, dataSource);
            failures.push(...failed.map((failure) => `${rename.what} renamed: ${failure}`));
          } finally {
            rename.undo();
            await runner.rollbackTransaction();
          }
        }
      }
    } finally {
      await runner.release();
    }
    expect(failures).toEqual([]);
  });
});
