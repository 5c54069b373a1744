import { InvalidModuleOptionsError } from '../../libs/notifications-retry/src';
import { resolveOptions } from '../../libs/notifications-retry/src/options/resolve-options';

/**
 * TEMPORARY (issue 10, item 1): whether the library under test knows the
 * `settleMarginMs` option. It is being added in parallel; a library without it
 * rejects it as an unknown option at start, so the chaos instances could not
 * boot. Once the option has landed, delete this file, drop
 * `InstanceConfig.settleMarginMs` and pass `settleMarginMs:
 * CHAOS_WORKER.settleMarginMs` in chaos-instance.ts directly.
 */
export function librarySupportsSettleMargin(marginMs: number): boolean {
  try {
    resolveOptions({ settleMarginMs: marginMs } as Parameters<typeof resolveOptions>[0]);
    return true;
  } catch (error) {
    if (error instanceof InvalidModuleOptionsError && error.option === 'settleMarginMs')
      return !/not a known option/.test(error.message);
    throw error;
  }
}
