/** What one attempt did to its row, as the cycle counts and the metrics label it. */
export type ItemResult = 'sent' | 'retried' | 'terminal' | 'deferred';
