/**
 * Vitest global setup: bundles the programs the tests start as processes
 * (see node-script.ts) once per run, and removes the bundles afterwards.
 */
import { buildTestScripts } from './node-script.js'

export default function setup(): Promise<() => void> {
  return buildTestScripts()
}
