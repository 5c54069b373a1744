import { Logger } from '@nestjs/common';
import type { InvalidChannelConfigError } from '../errors/invalid-channel-config.error';
import type { ChannelConfig } from './channel-config';
import { validateCatalogChannels } from './validate-channel-config';

/**
 * Where the worker learns channel settings. Read once per cycle. The default
 * reads `notification_channels`; a host may provide its own (config service,
 * feature-flag system) under this class as the DI token.
 *
 * The cycle reads any catalog through `readCatalogChannels`, which applies the
 * rules the default applies to a table row: an invalid entry is logged
 * (`channel-config-invalid`, an `InvalidChannelConfigError`) and left out, so
 * that its rows wait while the other channels carry on; a result that is not an
 * array fails the cycle with `InvalidChannelCatalogError`.
 */
export abstract class ChannelCatalog {
  /**
   * The channels. A catalog that validates entries of its own (the default
   * does, by the table's column rules) hands the ones it leaves out to
   * `reportInvalid`, so that they are logged and shown like any other.
   */
  abstract getChannels(
    reportInvalid?: (problem: InvalidChannelConfigError) => void,
  ): Promise<readonly ChannelConfig[]>;
}

/** A catalog read: the valid channels, and the keys of the entries left out as invalid. */
export interface CatalogChannels {
  readonly channels: readonly ChannelConfig[];
  readonly invalid: readonly string[];
}

const logger = new Logger(ChannelCatalog.name);
/** What was last logged per invalid entry, so that a bad row is logged when it changes, not every cycle. */
const logged = new WeakMap<ChannelCatalog, Map<string, string>>();

/**
 * The channels of a catalog, validated. Whatever the catalog is (a subclass, a
 * plain object provided with `useValue`), its answer is checked here, at the one
 * place the worker reads it; the default catalog's rows pass unchanged. Each
 * invalid entry is logged once while it stays the same (one line per change,
 * whatever the number of channels or cycles).
 */
export async function readCatalogChannels(catalog: ChannelCatalog): Promise<CatalogChannels> {
  const name = (catalog as object).constructor?.name;
  const catalogName = !name || name === 'Object' ? 'ChannelCatalog' : name;
  const problems: InvalidChannelConfigError[] = [];
  const result = await catalog.getChannels((problem) => problems.push(problem));
  const channels = validateCatalogChannels(result, catalogName, (problem) =>
    problems.push(problem),
  );
  report(catalog, catalogName, problems);
  return { channels, invalid: [...new Set(problems.map((problem) => problem.channel))] };
}

function report(
  catalog: ChannelCatalog,
  catalogName: string,
  problems: readonly InvalidChannelConfigError[],
): void {
  const previous = logged.get(catalog) ?? new Map<string, string>();
  const current = new Map<string, string>();
  for (const problem of problems) {
    current.set(problem.channel, problem.message);
    if (previous.get(problem.channel) === problem.message) continue;
    logger.error({
      msg: 'channel-config-invalid',
      event: 'channel-config-invalid',
      catalog: catalogName,
      channel: problem.channel,
      field: problem.column,
      errorCode: problem.code,
      error: problem.message,
    });
  }
  logged.set(catalog, current);
}
