import { defineConfig } from 'vitest/config';

// The kernel lab (issue 6): boots Debian kernels under QEMU, so it runs apart from the unit tests
// (`npm run test:lab`, after `npm run lab:setup`). One worker: the boots share two cores.
export default defineConfig({
  test: {
    include: ['test/lab/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 900_000,
  },
});
