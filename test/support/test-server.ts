/** Set by the global setup: connection string of the server the tests may create databases on. */
export const TEST_SERVER_URL_ENV = 'PIN_TEST_SERVER_URL';

export function testServerUrl(): string {
  const url = process.env[TEST_SERVER_URL_ENV];
  if (!url)
    throw new Error(`${TEST_SERVER_URL_ENV} is not set: run the tests through jest (global setup)`);
  return url;
}
