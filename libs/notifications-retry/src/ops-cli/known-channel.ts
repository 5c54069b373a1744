import { ChannelCatalog, readCatalogChannels } from '../channels/channel-catalog';
import { OperationRefusedError } from '../errors/operation-refused.error';
import type { OpsWorkspace } from './ops-workspace';

/**
 * Refuses a channel the catalog does not know, the same way for every command
 * that takes one: a typo must not look like "no rows" or a pause that holds
 * nothing back. `label` names where the key came from (`--channel`, `<key>`).
 */
export async function requireKnownChannel(
  workspace: OpsWorkspace,
  operation: string,
  label: string,
  key: string,
): Promise<void> {
  const catalog = await readCatalogChannels(await workspace.get(ChannelCatalog));
  const known = new Set([...catalog.channels.map((c) => c.key), ...catalog.invalid]);
  if (known.has(key)) return;
  throw new OperationRefusedError(
    operation,
    `${label} ${JSON.stringify(key)}: the channel catalog has no such channel (known: ${[...known].sort().join(', ') || 'none'})`,
  );
}
