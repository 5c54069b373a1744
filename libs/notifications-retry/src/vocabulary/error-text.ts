/** Name and message only: a driver error's other fields may hold query parameters. */
export function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
