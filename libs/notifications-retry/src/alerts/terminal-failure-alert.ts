/** What operators are told when a notification fails for good. No personal data. */
export interface TerminalFailureAlert {
  readonly notificationId: string;
  readonly channel: string;
  readonly providerKey: string | null;
  readonly attempts: number;
  readonly errorCode: string;
  readonly runId: string;
  readonly correlationId: string;
}
