/** A provider's circuit as the cycle sees it. */
export type CircuitState = 'closed' | 'open' | 'half-open';
