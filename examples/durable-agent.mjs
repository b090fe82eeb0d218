#!/usr/bin/env node
// Launcher for the durable-agent example (examples/durable-agent/cli.ts), as
// the README shows it: node examples/durable-agent.mjs [--live] start|answer|connect DIR SCENARIO
// It runs the TypeScript sources through tsx in this same process, with the
// repository's tsconfig so '@pushary/mastra' resolves to src/ (no build needed).
import { fileURLToPath } from 'node:url'
import { register } from 'tsx/esm/api'

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) })
const { run } = await import('./durable-agent/cli.ts')
run(process.argv.slice(2))
