import type { Config } from 'jest';

const config: Config = {
  rootDir: '.',
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  testMatch: [
    '<rootDir>/libs/**/*.spec.ts',
    '<rootDir>/apps/**/*.spec.ts',
    '<rootDir>/test/**/*.spec.ts',
    '<rootDir>/examples/**/*.spec.ts',
  ],
  transform: {
    // Type checking is done once by `tsc --noEmit` in `npm test`; per-file transpiling keeps jest fast.
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }],
  },
  moduleNameMapper: {
    '^@pin/notifications-retry$': '<rootDir>/libs/notifications-retry/src',
    '^@pin/notifications-retry/(.*)$': '<rootDir>/libs/notifications-retry/src/$1',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // StrykerJS's sandbox copies (npm run mutate) are not part of the project.
  modulePathIgnorePatterns: ['<rootDir>/.stryker-tmp/'],
  testTimeout: 60_000,
};

export default config;
