import { Injectable } from '@nestjs/common';
import { ProviderCircuitBreakers } from '../circuit/provider-circuit-breakers';
import { RetryMetrics } from './retry-metrics';

/** Keeps the circuit-state gauge in step with every provider's breaker, from the first call on. */
@Injectable()
export class CircuitStateMetrics {
  constructor(circuits: ProviderCircuitBreakers, metrics: RetryMetrics) {
    circuits.onStateChange((providerKey, state) => metrics.circuit(providerKey, state));
  }
}
