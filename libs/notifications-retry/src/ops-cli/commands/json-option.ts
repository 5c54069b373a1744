/** The options every command shares, parsed the same way everywhere. */
export interface JsonOption {
  readonly json?: boolean;
}

export const JSON_OPTION = {
  flags: '--json',
  description: 'print the result as JSON (for scripts)',
};
