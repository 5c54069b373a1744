import { createHash } from 'node:crypto';

/**
 * One compiled statement: a fixed text with `$1…$n` placeholders, and the
 * name it is prepared under. The name says what the statement does, then a
 * hash of the text: `pg` refuses one name for two texts on a connection, and a
 * host's own lock (a fence of its own) changes the text.
 */
export interface SqlStatement {
  readonly name: string;
  readonly text: string;
}

/** Binds named values to a statement's placeholders, in the order its compiler chose. */
export class BoundStatement<Name extends string> implements SqlStatement {
  readonly name: string;

  constructor(
    purpose: string,
    readonly text: string,
    /** Placeholder `$k` takes the value of `order[k - 1]`. */
    private readonly order: readonly Name[],
  ) {
    this.name = `nr_${purpose}_${createHash('sha1').update(text).digest('hex').slice(0, 12)}`;
  }

  values(values: Readonly<Record<Name, unknown>>): unknown[] {
    return this.order.map((name) => values[name]);
  }
}

/**
 * Numbers a statement's placeholders as its text is written: `ref('now')` is
 * `$k` for the first use and the same `$k` after. `adopt()` takes over the
 * `$k` of a fragment compiled elsewhere (a TypeORM query builder's, a lock's
 * fence) and renumbers them into this statement.
 */
export class StatementParameters<Name extends string> {
  private readonly order: Name[] = [];

  ref(name: Name): string {
    let index = this.order.indexOf(name);
    if (index < 0) index = this.order.push(name) - 1;
    return `$${index + 1}`;
  }

  /** `fragment`'s `$k` stands for `names[k - 1]`. */
  adopt(fragment: string, names: readonly Name[]): string {
    return fragment.replace(/\$(\d+)/g, (placeholder, k: string) => {
      const name = names[Number(k) - 1];
      if (name === undefined) {
        throw new Error(`SQL fragment uses ${placeholder} but binds only ${names.length} values`);
      }
      return this.ref(name);
    });
  }

  compile(purpose: string, text: string): BoundStatement<Name> {
    return new BoundStatement(purpose, text, [...this.order]);
  }
}
