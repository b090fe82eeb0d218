/**
 * The compiler's own words when a protected step is wired straight after the
 * approval step: the program below is compiled with the project's tsconfig
 * (as a user's editor would), and the error's first line must name the fix
 * (`insert .then(pusharyGate()) after pusharyApprovalStep`). The same program with the gate compiles clean.
 */
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const ROOT = join(import.meta.dirname, '../..')

function program(withGate: boolean): string {
  return `
import { createStep, createWorkflow } from '@mastra/core/workflows'
import { z } from 'zod/v4'
import {
  createPusharyClient,
  pusharyApprovalStep,
  pusharyApprovalStepInputSchema,
  pusharyApprovedAnswerSchema,
  pusharyGate,
} from '@pushary/mastra'

const client = createPusharyClient({ apiKey: 'pk_t.sk_t', baseUrl: 'http://127.0.0.1:1/api/v1/server' })
const refund = createStep({
  id: 'refund',
  inputSchema: pusharyApprovedAnswerSchema,
  outputSchema: z.object({ refunded: z.literal(true) }),
  execute: async () => ({ refunded: true as const }),
})
export const workflow = createWorkflow({ id: 'w', inputSchema: pusharyApprovalStepInputSchema, outputSchema: z.unknown() })
  .then(pusharyApprovalStep({ client }, { externalId: 'customer_1' }))
  ${withGate ? '.then(pusharyGate())' : ''}
  .then(refund)
  .commit()
void pusharyGate
`
}

const PROBES = {
  ungated: join(ROOT, 'test/types/__ungated_probe__.ts'),
  gated: join(ROOT, 'test/types/__gated_probe__.ts'),
}

/** Type-checks both virtual files, placed in test/types so module resolution is the project's, in one program. */
function diagnostics(): Record<keyof typeof PROBES, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'))
      },
    },
  )
  if (!config) throw new Error('tsconfig.json did not parse')
  const sources = new Map([
    [PROBES.ungated, program(false)],
    [PROBES.gated, program(true)],
  ])
  const host = ts.createCompilerHost(config.options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (name, version, onError, create) => {
    const source = sources.get(name)
    return source === undefined
      ? getSourceFile(name, version, onError, create)
      : ts.createSourceFile(name, source, version)
  }
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (name) => sources.has(name) || fileExists(name)
  const built = ts.createProgram([...sources.keys()], { ...config.options, noEmit: true }, host)
  const of = (file: string) =>
    ts
      .getPreEmitDiagnostics(built, built.getSourceFile(file))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  return { ungated: of(PROBES.ungated), gated: of(PROBES.gated) }
}

describe('wiring a protected step', () => {
  it('fails to compile without pusharyGate(), naming the fix on the first line, and compiles clean with it', () => {
    const errors = diagnostics()
    expect(errors.ungated).toHaveLength(1)
    const [first, ...rest] = (errors.ungated[0] ?? '').split('\n')
    // The first line is what an editor's hover and a CI log show: it carries the fix.
    expect(first).toContain('PusharyUngatedAnswer<"insert .then(pusharyGate()) after pusharyApprovalStep">')
    expect(rest.join('\n')).toMatch(/Property ''pusharyGate\(\)'' is missing/)
    expect(errors.gated).toEqual([])
  }, 120_000)
})
