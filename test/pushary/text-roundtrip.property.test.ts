/**
 * Property (issue 9): any identifier or free text the client, the step's
 * schemas or the service accept reads back byte for byte from every store:
 * the review stores (SQLite file, PostgreSQL) and the decision service's
 * SQLite file over HTTP. Any string that would not survive (NUL, unpaired
 * surrogates) is refused with a typed error naming the field, before any
 * request or write.
 */
import { createClient } from '@libsql/client'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPusharyClient, type PusharyClient } from '../../src/pushary/client.js'
import { isDisplayedTextExact } from '../../src/pushary/display-text.js'
import { isPusharyValidationError } from '../../src/pushary/errors.js'
import { externalIdSchema, idSchema, isCustomerIdText } from '../../src/pushary/identity.js'
import { questionTextSchema } from '../../src/pushary/question.js'
import { isStorableText } from '../../src/pushary/text-rules.js'
import { createPusharyDevServer, type PusharyDevServer } from '../../src/server/dev-server.js'
import type { PusharyReviewStore } from '../../src/store/review-store.js'
import { isPusharyStoreError } from '../../src/store/store-error.js'
import { rejection } from '../helpers/errors.js'
import { tempDir } from '../server/service-harness.js'
import { countingFetch } from '../server/support/devices.js'
import { workflowReview } from '../store/support/reviews.js'
import { STORE_KINDS, type StoreHarness, stopTestPostgres } from '../store/support/stores.js'

/** Ordinary but awkward text: any code point, whitespace, combining marks, U+FFFD. */
const plainUnit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom('\ufffd', ' ', '\t', '\n', 'é', 'e\u0301', '😀', '\u00a0') },
)
/** The same, with the code units that break storage mixed in. */
const hostileUnit = fc.oneof(
  { weight: 8, arbitrary: plainUnit },
  { weight: 1, arbitrary: fc.constant('\u0000') },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit)) },
)
const text = fc.oneof(
  fc.string({ unit: plainUnit, minLength: 1, maxLength: 24 }),
  fc.string({ unit: hostileUnit, minLength: 1, maxLength: 24 }),
)
const seen = { kept: 0, refused: 0 }

const RUNS = 120

let server: PusharyDevServer
let dbPath: string
const stores: Array<{ name: string; harness: StoreHarness; store: PusharyReviewStore }> = []

beforeAll(async () => {
  dbPath = `${tempDir('property')}/service.db`
  server = await createPusharyDevServer({ dbPath, port: 0 })
  for (const kind of STORE_KINDS) {
    const harness = await kind.setup('property')
    stores.push({ name: kind.name, harness, store: harness.open() })
  }
})

afterAll(async () => {
  for (const { harness } of stores) await harness.dispose()
  await stopTestPostgres()
  await server?.close()
})

async function decisionRows(): Promise<number> {
  const db = createClient({ url: `file:${dbPath}` })
  try {
    return Number((await db.execute('SELECT count(*) AS n FROM decisions')).rows[0]?.n ?? 0)
  } finally {
    db.close()
  }
}

function client(fetchImpl: typeof fetch): PusharyClient {
  return createPusharyClient({ baseUrl: server.baseUrl, apiKey: server.apiKey, fetch: fetchImpl })
}

describe('text round-trips byte for byte or is refused up front', () => {
  it('the shared schemas accept a string exactly when every store can keep it', () => {
    fc.assert(
      fc.property(text, (value) => {
        const storable = isStorableText(value)
        expect(idSchema.safeParse(value).success).toBe(storable && value.trim() !== '')
        expect(externalIdSchema.safeParse(value).success).toBe(storable && value.trim() !== '')
        // A question is also displayed text: invisible and bidi characters are refused (display-text.ts).
        expect(questionTextSchema.safeParse(value).success).toBe(
          storable && value.trim() !== '' && isDisplayedTextExact(value.trim()),
        )
      }),
      { numRuns: 2_000 },
    )
  })

  it('the decision service keeps every accepted customer ID, question and context, and refuses the rest before any request or write', async () => {
    await fc.assert(
      fc.asyncProperty(text, text, text, async (externalId, question, context) => {
        const counter = countingFetch()
        const input = { externalId, question, context, idempotencyKey: `prop-${crypto.randomUUID()}` }
        const accepted = [externalId, question, context].every(isStorableText)
        const displayed = isDisplayedTextExact(question.trim()) && isDisplayedTextExact(context)
        // A new customer ID is also refused with a control, bidi or invisible character (identity.ts).
        const usable =
          accepted &&
          displayed &&
          isCustomerIdText(externalId) &&
          externalId.trim() !== '' &&
          question.trim() !== ''
        const before = await decisionRows()
        if (!usable) {
          const error = await rejection(client(counter.fetch).decisions.create(input))
          expect(isPusharyValidationError(error)).toBe(true)
          const field = isPusharyValidationError(error) ? error.field : ''
          expect(['externalId', 'question', 'context']).toContain(field)
          expect(counter.count()).toBe(0)
          // The service refuses it too when a caller skips the client.
          const raw = await fetch(`${server.baseUrl}/decisions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify(input),
          })
          expect(raw.status).toBe(400)
          expect(['externalId', 'question', 'context']).toContain(
            ((await raw.json()) as { field: string }).field,
          )
          expect(await decisionRows()).toBe(before)
          seen.refused += 1
          return
        }
        seen.kept += 1
        const created = await client(counter.fetch).decisions.create(input)
        const read = await client(fetch).decisions.get(created.decisionId)
        expect(read.externalId === externalId).toBe(true)
        expect(read.context === context).toBe(true)
        expect(read.question === question).toBe(true)
        const listed = await client(fetch).decisions.list({ externalId, limit: 5 })
        expect(listed.decisions.map((d) => d.decisionId)).toContain(created.decisionId)
      }),
      { numRuns: RUNS },
    )
    // Both branches were exercised, so the property says something either way.
    expect(seen.kept).toBeGreaterThan(10)
    expect(seen.refused).toBeGreaterThan(10)
  })

  it('every review store keeps every accepted identifier and question, and refuses the rest without writing', async () => {
    await fc.assert(
      fc.asyncProperty(text, text, async (identifier, question) => {
        const base = workflowReview()
        const review = {
          ...base,
          externalId: identifier,
          operationId: identifier,
          stepId: identifier,
          question: { question, type: 'confirm' as const },
        }
        const usable =
          isStorableText(identifier) &&
          identifier.trim() !== '' &&
          isStorableText(question) &&
          question.trim() !== '' &&
          isDisplayedTextExact(question.trim())
        for (const { name, store } of stores) {
          if (!usable) {
            const error = await rejection(store.save(review))
            expect(isPusharyStoreError(error), name).toBe(true)
            const field = isPusharyStoreError(error) ? error.field : ''
            expect(['externalId', 'operationId', 'stepId', 'question.question'], name).toContain(field)
            expect(await store.get(base.decisionId), name).toBeNull()
            continue
          }
          await store.save(review)
          const read = await store.get(base.decisionId)
          expect(read?.target === 'workflow-step' && read.externalId === identifier, name).toBe(true)
          expect(read?.target === 'workflow-step' && read.operationId === identifier, name).toBe(true)
          expect(read?.target === 'workflow-step' && read.stepId === identifier, name).toBe(true)
          expect(read?.target === 'workflow-step' && read.question.question === question.trim(), name).toBe(
            true,
          )
        }
      }),
      { numRuns: RUNS },
    )
  })
})
