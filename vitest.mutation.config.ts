import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

/**
 * The tests StrykerJS runs against each mutant (`npm run test:mutation`).
 * Only fast, deterministic, in-process files: a child process (the crash,
 * race and cross-process tests) loads the sources afresh and never sees the
 * active mutant, so it could neither kill nor cover one; randomised property
 * runs would make kills depend on the seed. Standalone rather than merged
 * with vitest.config.ts, whose `include` a merge would extend, not replace.
 */
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@pushary\/mastra$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      {
        find: /^@pushary\/mastra\/testing$/,
        replacement: fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)),
      },
    ],
  },
  test: {
    include: [
      'test/pushary/question.test.ts',
      'test/machines/review-lifecycle.test.ts',
      'test/machines/machine-diagram.test.ts',
      'test/store/review-store.contract.test.ts',
      'test/store/review-schema.test.ts',
      'test/store/store-rules.test.ts',
      'test/steps/*.test.ts',
      'test/workflows/resume-guard.test.ts',
    ],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
