import { parseSince, parseText } from '../ops-arguments';

/** `--channel`, `--error-code`, `--since` of the terminal commands and redrive. */
export interface TerminalFilterOptions {
  readonly channel?: string;
  readonly errorCode?: string;
  readonly since?: Date;
}

export const CHANNEL_OPTION = { flags: '--channel <key>', description: 'only this channel' };
export const ERROR_CODE_OPTION = {
  flags: '--error-code <code>',
  description: 'only this last error code',
};
export const SINCE_OPTION = {
  flags: '--since <time>',
  description: 'only rows that failed since then: ISO 8601 time or 30m, 24h, 7d back',
};

export const parseChannel = (value: string): string => parseText('--channel', value);
export const parseErrorCode = (value: string): string => parseText('--error-code', value);
export const parseSinceOption = (value: string): Date => parseSince(value);

export function filterOf(options: TerminalFilterOptions): TerminalFilterOptions {
  return {
    ...(options.channel !== undefined ? { channel: options.channel } : {}),
    ...(options.errorCode !== undefined ? { errorCode: options.errorCode } : {}),
    ...(options.since !== undefined ? { since: options.since } : {}),
  };
}
