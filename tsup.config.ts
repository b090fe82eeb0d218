import { defineConfig } from 'tsup'

export default defineConfig([
  {
    entry: { index: 'src/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    external: [/^@mastra\//, 'zod', /^zod\//],
  },
  {
    // `@pushary/mastra/testing`. It imports the main entry by the package's
    // own name, kept external, so a test that loads both shares one copy of
    // the client and the error classes (`instanceof` holds), in ESM and CJS.
    entry: { testing: 'src/testing/index.ts' },
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    target: 'node20',
    external: [/^@mastra\//, 'zod', /^zod\//, '@pushary/mastra'],
  },
  {
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    external: [/^@mastra\//, 'zod', /^zod\//],
  },
])
