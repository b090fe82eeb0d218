/**
 * Long-poll budgets over loopback HTTP: the site key and every bound key hold
 * their own long-polls, and the bound keys of one customer share one more
 * budget, so one key holding all of its slots never makes another key wait
 * for a 429.
 */
import { describe, expect, it } from 'vitest'
import { type Harness, serviceFixture } from './service-harness.js'

const service = serviceFixture('long-poll-budgets')

/** A long-poll held open with `key` until the decision settles or `stop` aborts it. */
function hold(h: Harness, key: string, decisionId: string, stop: AbortController): Promise<number> {
  return fetch(`${h.server.baseUrl}/decisions/${decisionId}?wait=30`, {
    headers: { authorization: `Bearer ${key}` },
    signal: stop.signal,
  }).then(
    async (response) => {
      await response.text()
      return response.status
    },
    () => 0,
  )
}

/** Tries a short long-poll with `key` until it is refused: then every slot of `key` is held. */
async function untilRefused(h: Harness, key: string, decisionId: string): Promise<number> {
  let status = 0
  for (let attempt = 0; attempt < 100 && status !== 429; attempt += 1) {
    status = (await h.api('GET', `/decisions/${decisionId}?wait=1`, undefined, { key })).status
  }
  return status
}

describe('long-poll budgets', () => {
  it("keeps serving the site key's and key B's long-polls while key A holds all of its own", async () => {
    const h = await service.start({ limits: { maxLongPollsPerKey: 2 } })
    const a = await h.client.keys.issue({ externalId: 'customer_a' })
    const b = await h.client.keys.issue({ externalId: 'customer_b' })
    const ofA = await h.client.decisions.create({ question: 'Refund A?', externalId: 'customer_a' })
    const ofB = await h.client.decisions.create({ question: 'Refund B?', externalId: 'customer_b' })
    const bySite = await h.client.decisions.create({ question: 'Deploy?' })

    const stop = new AbortController()
    const held = [1, 2].map(() => hold(h, a.apiKey, ofA.decisionId, stop))
    try {
      expect(await untilRefused(h, a.apiKey, ofA.decisionId)).toBe(429)

      const site = await h.api('GET', `/decisions/${bySite.decisionId}?wait=1`)
      expect(site.status).toBe(200)
      expect(site.json).toMatchObject({ status: 'pending' })
      const keyB = await h.api('GET', `/decisions/${ofB.decisionId}?wait=1`, undefined, { key: b.apiKey })
      expect(keyB.status).toBe(200)
      // A create that waits for its answer is held under the same budget.
      const waitingCreate = await h.api('POST', '/decisions', {
        question: 'Ship?',
        wait: true,
        timeoutSeconds: 1,
      })
      expect(waitingCreate.status).toBe(201)

      // Another key of the same customer shares the customer's budget.
      const a2 = await h.client.keys.issue({ externalId: 'customer_a' })
      const second = await h.api('GET', `/decisions/${ofA.decisionId}?wait=1`, undefined, { key: a2.apiKey })
      expect(second.status).toBe(429)
      expect(second.json.code).toBe('too_many_waits')

      // The held polls end with the answer, and A's slots are free again.
      await h.client.decisions.answer(ofA.decisionId, 'no')
      expect(await Promise.all(held)).toEqual([200, 200])
      const again = await h.api('GET', `/decisions/${ofA.decisionId}?wait=1`, undefined, { key: a.apiKey })
      expect(again.status).toBe(200)
    } finally {
      stop.abort()
      await Promise.all(held)
    }
  })
})
