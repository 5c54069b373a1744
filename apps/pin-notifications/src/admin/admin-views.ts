import { join } from 'node:path';
import { Eta } from 'eta';

/** What every page's layout shows besides its own content. */
export interface PageFrame {
  readonly title: string;
  /** The nav entry to mark as current. */
  readonly section: string;
  readonly csrf: string;
  readonly canSignOut: boolean;
  readonly notice?: string | null;
  readonly error?: string | null;
}

/** Formatting the templates share; every value they print still goes through Eta's escaping. */
const helpers = {
  time(value: Date | string | null | undefined): string {
    if (value === null || value === undefined) return '–';
    const date = value instanceof Date ? value : new Date(value);
    return Number.isNaN(date.getTime()) ? String(value) : date.toISOString().replace('.000Z', 'Z');
  },
  /** A query string from the set fields, for links that keep a filter. */
  query(fields: Record<string, string | undefined | null>): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) {
      if (value !== undefined && value !== null && value !== '') params.set(name, value);
    }
    const text = params.toString();
    return text ? `?${text}` : '';
  },
  json(value: unknown): string {
    return value === null || value === undefined ? '' : JSON.stringify(value);
  },
};

/**
 * The console's HTML: Eta templates under views/, every interpolation
 * XML-escaped (`<%= %>`); raw output (`<%~ %>`) only for included templates
 * and the layout's body.
 */
export class AdminViews {
  private readonly eta = new Eta({
    views: join(__dirname, 'views'),
    autoEscape: true,
    cache: true,
  });

  page(name: string, frame: PageFrame, data: Record<string, unknown>): string {
    return this.eta.render(`./${name}`, { ...data, frame, h: helpers });
  }

  /** A part of a page on its own, for htmx's refresh of lists and counts. */
  fragment(name: string, data: Record<string, unknown>): string {
    return this.eta.render(`./${name}`, { ...data, h: helpers });
  }
}

export const adminViews = new AdminViews();
