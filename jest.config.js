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
};
