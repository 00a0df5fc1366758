import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/lab/**'],
    // The CLI tests spawn the built binary; keep them from racing a 2-core machine.
    pool: 'forks',
    testTimeout: 30_000,
  },
});
