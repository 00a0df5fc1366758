import { describe, expect, it } from 'vitest';
import { hasTool, testTools } from './support/tools.js';

// The one test that fails when a tool from scripts/install-test-deps.sh is missing. Tests that
// run such a tool are skipped without it (skipIf), so a missing tool reads as one line here,
// not as a cascade of unrelated-looking errors; this test keeps the suite red until it is there.
describe('test dependencies (scripts/install-test-deps.sh: .ci/run\'s install step, and `npm test` as root)', () => {
  it('lists at least the shells the collector must run under', () => {
    expect(testTools().map((t) => t.command)).toEqual(expect.arrayContaining(['busybox', 'dash', 'tmux', 'xmllint']));
  });

  it('finds every tool the script installs on PATH', () => {
    const missing = testTools().filter((t) => !hasTool(t.command)).map((t) => `${t.command} (Debian package ${t.pkg}: ${t.why})`);
    expect(missing, `missing: ${missing.join(', ')}; run: sudo sh scripts/install-test-deps.sh`).toEqual([]);
  });
});
