/**
 * The package checked from outside against the hosted wire: the durable
 * agent CLI (`examples/durable-agent.mjs --live`, configured only through
 * `PUSHARY_API_KEY` / `PUSHARY_BASE_URL` / `PUSHARY_EXTERNAL_ID`) runs as
 * fresh OS processes against the hosted fake, exactly as a customer would
 * point it at pushary.com. The person's answers are ones the hosted API may
 * relay (`Yes`, `maybe`), not only the local service's `yes`/`no`.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../examples/durable-agent/check-support.js'
import { type HostedFake, startHostedFake } from './hosted-fake.js'

let fake: HostedFake
let root: string

beforeAll(async () => {
  fake = await startHostedFake()
  root = mkdtempSync(join(tmpdir(), 'pushary-cli-hosted-'))
})
afterAll(async () => {
  await fake?.close()
})

const live = (args: string[]) =>
  runCli(['--live', ...args], {
    PUSHARY_API_KEY: fake.apiKey,
    PUSHARY_BASE_URL: fake.baseUrl,
    PUSHARY_EXTERNAL_ID: 'customer_1',
  })

describe('durable agent CLI in --live mode against the hosted wire', () => {
  it.each([
    ['approve', 'Yes', true, 1],
    ['approve', 'maybe', false, 0],
  ] as const)(
    '%s answered %j: approved %s, %i refund(s), once',
    async (scenario, value, approved, refunds) => {
      const dir = join(root, `${scenario}-${value}`)
      const pagesBefore = fake.pages
      const started = await live(['start', dir, scenario])
      expect(started.code, started.stderr).toBe(0)
      const decisionId = String(started.result?.decisionId)
      expect(fake.pages).toBe(pagesBefore + 1)

      const waiting = await live(['answer', dir, scenario])
      expect(waiting.code, waiting.stderr).toBe(0)
      expect(waiting.result?.status).toBe('pending')

      await fake.answer(decisionId, value)
      const answered = await live(['answer', dir, scenario])
      expect(answered.code, answered.stderr).toBe(0)
      expect(answered.result).toMatchObject({ status: 'resumed', refunds, answer: { value, approved } })

      const duplicate = await live(['answer', dir, scenario])
      expect(duplicate.result).toMatchObject({ status: 'duplicate', refunds })
      expect(fake.pages).toBe(pagesBefore + 1)
    },
  )
})
