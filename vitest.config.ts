import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  resolve: {
    // Tests that import the package by name get the sources, like the
    // tsconfig path the examples run with; no build needed.
    // Exact matches: a prefix alias would turn '@pushary/mastra/testing' into
    // 'src/index.ts/testing'.
    alias: [
      { find: /^@pushary\/mastra$/, replacement: fileURLToPath(new URL('./src/index.ts', import.meta.url)) },
      {
        find: /^@pushary\/mastra\/testing$/,
        replacement: fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)),
      },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // Bundles the fixtures, workers and CLI the tests start as processes,
    // so a child starts without tsx's loader (test/helpers/node-script.ts).
    globalSetup: ['test/helpers/global-setup.ts'],
    // Crash tests spawn and kill several OS processes per case; on a loaded
    // 2-core machine one case can take a minute. A hang still fails.
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
})
