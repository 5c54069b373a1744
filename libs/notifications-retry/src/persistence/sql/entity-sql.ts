import type { DataSource, EntityTarget, ObjectLiteral } from 'typeorm';

/**
 * Table and column names of an entity as SQL identifiers, read from the
 * DataSource's metadata: the entities are the one place names are written.
 * An unknown property fails at compile time (start-up), not at the first cycle.
 */
export interface EntitySql<T> {
  readonly table: string;
  column(property: keyof T & string): string;
}

export function entitySql<T extends ObjectLiteral>(
  dataSource: DataSource,
  entity: EntityTarget<T>,
): EntitySql<T> {
  const metadata = dataSource.getMetadata(entity);
  const escape = (name: string): string => dataSource.driver.escape(name);
  return {
    table: escape(metadata.tableName),
    column: (property) => {
      const column = metadata.findColumnWithPropertyName(property);
      if (!column) throw new Error(`${metadata.name} has no column for property "${property}"`);
      return escape(column.databaseName);
    },
  };
}
