import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import CircuitBreaker from 'opossum';
import type { AttemptOutcome } from '../vocabulary/attempt-outcome';
import { RESOLVED_NOTIFICATIONS_RETRY_OPTIONS } from '../options/resolved-options.token';
import type { ResolvedNotificationsRetryOptions } from '../options/notifications-retry-options';
import type { CircuitState } from './circuit-state';

type Attempt = () => Promise<AttemptOutcome>;

/** Ids of the cycle making a call, carried onto the circuit's log lines. */
export interface CircuitCaller {
  readonly runId: string;
  readonly correlationId: string;
}

/** Carries a retriable outcome through opossum, which counts only rejections as failures. */
class CountedFailure extends Error {
  constructor(readonly outcome: AttemptOutcome) {
    super('retriable provider failure');
  }
}

/** A retriable outcome as the rejection opossum counts; any other as it is. */
function countRetriable(outcome: AttemptOutcome): AttemptOutcome {
  if (outcome.kind === 'retriable') throw new CountedFailure(outcome);
  return outcome;
}

/**
 * One opossum breaker per provider key. Only retriable failures (timeouts, 5xx,
 * unknown errors) count: a rejected address or a 429 says the provider is up.
 * While a circuit is open the cycle leaves that provider's rows out of the
 * claim; once half-open it lets a single call through as the probe.
 *
 * State lives in this instance. Only the lease holder runs cycles, so a new
 * leader starts with closed circuits and finds out again within a few calls.
 */
@Injectable()
export class ProviderCircuitBreakers implements OnModuleDestroy {
  private readonly logger = new Logger('NotificationsRetryCircuit');
  private readonly breakers = new Map<string, CircuitBreaker<[Attempt], AttemptOutcome>>();
  private readonly listeners = new Set<(providerKey: string, state: CircuitState) => void>();
  /** The cycle whose call last went through each breaker: state changes are logged with its ids. */
  private readonly lastCaller = new Map<string, CircuitCaller>();

  constructor(
    @Inject(RESOLVED_NOTIFICATIONS_RETRY_OPTIONS)
    private readonly options: ResolvedNotificationsRetryOptions,
  ) {}

  onModuleDestroy(): void {
    // Clears opossum's reset and window timers, which would otherwise keep the process alive.
    for (const breaker of this.breakers.values()) breaker.shutdown();
    this.breakers.clear();
  }

  state(providerKey: string): CircuitState {
    const breaker = this.breakers.get(providerKey);
    if (!breaker || breaker.closed) return 'closed';
    return breaker.halfOpen ? 'half-open' : 'open';
  }

  /** Every provider that has a breaker, with its state. */
  states(): ReadonlyMap<string, CircuitState> {
    return new Map([...this.breakers.keys()].map((key) => [key, this.state(key)]));
  }

  /** Called on every state change; for metrics and alerts. */
  onStateChange(listener: (providerKey: string, state: CircuitState) => void): void {
    this.listeners.add(listener);
  }

  /** Runs one delivery attempt through the provider's breaker. An open circuit answers `interrupted`. */
  async call(
    providerKey: string,
    attempt: Attempt,
    caller?: CircuitCaller,
  ): Promise<AttemptOutcome> {
    if (!this.options.circuitBreaker.enabled) return attempt();
    // Copied once per cycle: the caller may be the whole cycle's state, which must not outlive it here.
    if (caller && this.lastCaller.get(providerKey)?.runId !== caller.runId) {
      this.lastCaller.set(providerKey, {
        runId: caller.runId,
        correlationId: caller.correlationId,
      });
    }
    try {
      return await this.breakerFor(providerKey).fire(attempt);
    } catch (error) {
      if (error instanceof CountedFailure) return error.outcome;
      if ((error as { code?: unknown }).code === 'EOPENBREAKER') {
        return { kind: 'interrupted', errorCode: 'circuit_open' };
      }
      throw error;
    }
  }

  private breakerFor(providerKey: string): CircuitBreaker<[Attempt], AttemptOutcome> {
    const existing = this.breakers.get(providerKey);
    if (existing) return existing;
    const settings = this.options.circuitBreaker;
    const breaker = new CircuitBreaker<[Attempt], AttemptOutcome>(
      (attempt: Attempt) => attempt().then(countRetriable),
      {
        name: providerKey,
        // The channel timeout already bounds every call; a second timer here would disagree with it.
        timeout: false,
        errorThresholdPercentage: settings.errorThresholdPercentage,
        volumeThreshold: settings.volumeThreshold,
        resetTimeout: settings.resetTimeoutMs,
        rollingCountTimeout: settings.rollingWindowMs,
        rollingCountBuckets: 10,
        // Nothing reads its latency percentiles, and with them on opossum concatenates and sorts
        // every latency of the window on each failure, to decide whether to open.
        rollingPercentilesEnabled: false,
      },
    );
    breaker.on('open', () => this.changed(providerKey, 'open'));
    breaker.on('halfOpen', () => this.changed(providerKey, 'half-open'));
    breaker.on('close', () => this.changed(providerKey, 'closed'));
    this.breakers.set(providerKey, breaker);
    return breaker;
  }

  private changed(providerKey: string, state: CircuitState): void {
    const event =
      state === 'open'
        ? 'circuit-opened'
        : state === 'half-open'
          ? 'circuit-half-open'
          : 'circuit-closed';
    // Opening and closing happen inside a call, so they belong to that cycle; half-open comes from a timer.
    const caller = state === 'half-open' ? undefined : this.lastCaller.get(providerKey);
    const fields = { msg: event, event, providerKey, state, ...caller };
    if (state === 'open') this.logger.error(fields);
    else this.logger.warn(fields);
    for (const listener of this.listeners) listener(providerKey, state);
  }
}
