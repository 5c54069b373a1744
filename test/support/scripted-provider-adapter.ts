import { Injectable, type Type } from '@nestjs/common';
import {
  NotificationProvider,
  ProviderAdapter,
  type OutgoingNotification,
  type SendContext,
  type SendResult,
} from '@pin/notifications-retry';

export const SCRIPTED_PROVIDER_KEY = 'scripted';

export interface RecordedCall {
  readonly message: OutgoingNotification;
  readonly idempotencyKey: string;
  /** performance.now() when the call started and when it settled. */
  readonly startedAt: number;
  settledAt?: number;
}

type Behaviour = (
  message: OutgoingNotification,
  context: SendContext,
) => Promise<SendResult> | SendResult;

/**
 * A provider whose answer each test scripts. Records every call with its
 * timing, so tests can count sends per notification and check pacing.
 */
export class ScriptedAdapter extends ProviderAdapter {
  readonly calls: RecordedCall[] = [];
  private behaviour: Behaviour = (message) => ({ providerMessageId: `scripted-${message.id}` });

  respondWith(behaviour: Behaviour): void {
    this.behaviour = behaviour;
  }

  async send(message: OutgoingNotification, context: SendContext): Promise<SendResult> {
    const call: RecordedCall = {
      message,
      idempotencyKey: context.idempotencyKey,
      startedAt: performance.now(),
    };
    this.calls.push(call);
    try {
      return await this.behaviour(message, context);
    } finally {
      call.settledAt = performance.now();
    }
  }

  callsFor(id: string): number {
    return this.calls.filter((call) => call.message.id === id).length;
  }

  /** The most calls that were in flight at the same moment. */
  maxInFlight(): number {
    const edges = this.calls.flatMap((c) => [
      { at: c.startedAt, delta: 1 },
      { at: c.settledAt ?? Number.POSITIVE_INFINITY, delta: -1 },
    ]);
    edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
    let current = 0;
    let max = 0;
    for (const edge of edges) max = Math.max(max, (current += edge.delta));
    return max;
  }
}

@Injectable()
@NotificationProvider(SCRIPTED_PROVIDER_KEY)
export class ScriptedProviderAdapter extends ScriptedAdapter {}

/** Another scripted adapter class, registered under its own provider key. */
export function scriptedAdapterFor(providerKey: string): Type<ScriptedAdapter> {
  @Injectable()
  @NotificationProvider(providerKey)
  class KeyedScriptedAdapter extends ScriptedAdapter {}
  Object.defineProperty(KeyedScriptedAdapter, 'name', { value: `Scripted(${providerKey})` });
  return KeyedScriptedAdapter;
}
