import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/lab/**'],
    // The CLI tests spawn the built binary; keep them from racing a 2-core machine.
    pool: 'forks',
    testTimeout: 30_000,
    // Temporary files of the whole run live in one directory, removed at the end (test/setup/tmpdir.ts).
    globalSetup: ['test/setup/tmpdir.ts'],
  },
});
