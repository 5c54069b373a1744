export const NotificationStatus = {
  Pending: 'Pending',
  Sent: 'Sent',
  Failed: 'Failed',
} as const;

export type NotificationStatus = (typeof NotificationStatus)[keyof typeof NotificationStatus];
