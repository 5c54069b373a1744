import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import * as retry from '@pin/notifications-retry';
import type {
  NotificationBrowserApi,
  NotificationDiscardApi,
  OperatorAuditLogApi,
  OutboxOperationsApi,
  RecentCyclesApi,
} from './console-contract';
import { ConsoleUnavailableError } from './console-unavailable.error';

/** The library's class names of the operations the console needs (issue 22's contract). */
const SERVICE_NAMES = {
  browser: 'NotificationBrowser',
  discard: 'NotificationDiscard',
  outbox: 'OutboxOperations',
  audit: 'OperatorAuditLog',
  cycles: 'RecentCycles',
} as const;

type ServiceKey = keyof typeof SERVICE_NAMES;

/**
 * The operations services the console reads and acts through, found by their
 * exported class name: a library that lacks one leaves that page showing
 * "not available" (503 in the API) instead of failing the whole app.
 */
@Injectable()
export class ConsoleOperations {
  private readonly found = new Map<ServiceKey, unknown>();

  constructor(moduleRef: ModuleRef) {
    const exported = retry as unknown as Record<string, unknown>;
    for (const [key, name] of Object.entries(SERVICE_NAMES) as [ServiceKey, string][]) {
      const type = exported[name];
      if (typeof type !== 'function') continue;
      try {
        this.found.set(key, moduleRef.get(type, { strict: false }));
      } catch {
        // Exported but not provided by the module: as good as absent.
      }
    }
  }

  get browser(): NotificationBrowserApi {
    return this.need('browser') as NotificationBrowserApi;
  }

  get discard(): NotificationDiscardApi {
    return this.need('discard') as NotificationDiscardApi;
  }

  get outbox(): OutboxOperationsApi {
    return this.need('outbox') as OutboxOperationsApi;
  }

  get audit(): OperatorAuditLogApi {
    return this.need('audit') as OperatorAuditLogApi;
  }

  get cycles(): RecentCyclesApi {
    return this.need('cycles') as RecentCyclesApi;
  }

  has(key: ServiceKey): boolean {
    return this.found.has(key);
  }

  private need(key: ServiceKey): unknown {
    const service = this.found.get(key);
    if (service === undefined) throw new ConsoleUnavailableError(SERVICE_NAMES[key]);
    return service;
  }
}
