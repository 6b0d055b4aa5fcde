/** @type {import('jest').Config} */
const project = (name, extra = {}) => ({
  displayName: name,
  preset: 'ts-jest',
  testEnvironment: 'node',
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
