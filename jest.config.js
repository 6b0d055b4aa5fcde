const os = require('node:os');

/**
 * Tests are transpiled file by file (`isolatedModules`): types are checked once for the whole
 * tree by `npm run typecheck`, which `pretest` runs, not again per test file.
 * @type {import('jest').Config}
 */
const project = (name, extra = {}) => ({
  displayName: name,
  testEnvironment: 'node',
  transform: { '^.+\\.tsx?$': ['ts-jest', { tsconfig: '<rootDir>/test/tsconfig.jest.json' }] },
  testMatch: [`<rootDir>/test/${name}/**/*.test.ts`],
  // Each file holds the shared side of the lock that files measuring latency take to run alone.
  setupFilesAfterEnv: ['<rootDir>/test/support/run-alone-setup.ts'],
  ...extra,
});

module.exports = {
  projects: [
    project('unit'),
    project('integration', {
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    }),
    project('cluster', {
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    }),
  ],
  testTimeout: 60_000,
  // One file per core, at least two: the integration and cluster files spend their time waiting on
  // services, processes and conditions, not computing (jest's default, cores - 1, runs one file at
  // a time on two cores). Files that measure latency run alone (test/support/run-alone.ts).
  maxWorkers: Math.max(2, os.availableParallelism()),
};
