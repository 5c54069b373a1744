import type { EntitySql } from './entity-sql';

/**
 * A select (or RETURNING) list of an entity's columns, each named by its
 * property (`paused_by AS "pausedBy"`): the rows a statement returns are keyed
 * by the entity's properties, so a column rename changes no reader.
 * `qualifier` prefixes every column (`n.`).
 */
export function selectColumns<T>(
  entity: EntitySql<T>,
  properties: ReadonlyArray<keyof T & string>,
  qualifier = '',
): string {
  return properties
    .map((property) => `${qualifier}${entity.column(property)} AS "${property}"`)
    .join(', ');
}
