import { parseText } from '../ops-arguments';

export const REASON_OPTION = {
  flags: '--reason <text>',
  description: 'why (recorded in the audit)',
};
export const ACTOR_OPTION = {
  flags: '--actor <name>',
  description: 'who (recorded in the audit); default cli:$USER@host',
};

export const parseReason = (value: string): string => parseText('--reason', value);
export const parseActor = (value: string): string => parseText('--actor', value);
