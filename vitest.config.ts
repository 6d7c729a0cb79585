import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    maxWorkers: 2,
    // Under CI the log is read from its end: a dot per test, then the failures and the summary.
    reporters: process.env.CI ? ['dot'] : ['default'],
  },
});
