/**
 * The simulated phone against the real local service: it reads the card a
 * person would see and taps only controls the card offers; what it cannot
 * tap is refused before anything is sent, and the decision stays open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  linkSimulatedPhone,
  PusharyTestingError,
  type PusharyTestService,
  type SimulatedPhone,
  startPusharyTestService,
} from '../../src/testing/index.js'

let service: PusharyTestService
let phone: SimulatedPhone

beforeAll(async () => {
  service = await startPusharyTestService()
  phone = await service.phone('alice')
})
afterAll(() => service.close())

const ask = (input: Parameters<PusharyTestService['client']['decisions']['create']>[0]) =>
  service.client.decisions.create(input)

describe('a simulated phone', () => {
  it('links the customer by tapping the enrollment link, so the customer is reachable', async () => {
    expect((await service.client.reachability('bob')).reachable).toBe(false)
    await service.phone('bob')
    expect((await service.client.reachability('bob')).reachable).toBe(true)
  })

  it('reads a select card as shown (escaped text included) and records the option it taps', async () => {
    const question = 'Refund "A&B" <order> how?'
    const { decisionId } = await ask({
      question,
      externalId: 'alice',
      type: 'select',
      options: ['card', 'store credit'],
    })
    const seen = await phone.nextQuestion({ where: (q) => q.decisionId === decisionId })
    expect(seen).toMatchObject({ question, type: 'select', options: ['card', 'store credit'] })
    expect(await phone.choose(decisionId, 'store credit')).toMatchObject({
      status: 'answered',
      value: 'store credit',
    })
    expect(await service.client.decisions.get(decisionId)).toMatchObject({
      status: 'answered',
      value: 'store credit',
    })
  })

  it('refuses to tap a control the card does not offer, naming it, and sends nothing', async () => {
    const { decisionId } = await ask({
      question: 'Pick one',
      externalId: 'alice',
      type: 'select',
      options: ['a', 'b'],
    })
    const missing = await phone.choose(decisionId, 'c').catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(PusharyTestingError)
    expect(missing).toMatchObject({ code: 'no_such_control', field: 'option' })
    expect((missing as Error).message).toContain('["a","b"]')
    await expect(phone.approve(decisionId)).rejects.toMatchObject({ code: 'no_such_control' })
    await expect(phone.type(decisionId, 'a')).rejects.toMatchObject({ code: 'no_such_control' })
    expect((await service.client.decisions.get(decisionId)).status).toBe('pending')
  })

  it('finds a closed card instead of answering twice', async () => {
    const { decisionId } = await ask({ question: 'Refund EUR 5?', externalId: 'alice' })
    expect((await phone.deny(decisionId)).status).toBe('answered')
    expect(await phone.approve(decisionId)).toMatchObject({ status: 'closed', message: 'Denied.' })
    expect(await service.client.decisions.get(decisionId)).toMatchObject({ status: 'answered', value: 'no' })
  })

  it("never sees or answers another customer's question", async () => {
    const carol = await service.phone('carol')
    const { decisionId } = await ask({ question: 'For Alice only?', externalId: 'alice' })
    expect(await carol.questions()).toEqual([])
    expect((await carol.approve(decisionId)).status).toBe('forbidden')
    await expect(carol.nextQuestion({ timeoutMs: 200 })).rejects.toMatchObject({ code: 'no_question' })
    expect((await service.client.decisions.get(decisionId)).status).toBe('pending')
    await service.client.decisions.cancel(decisionId)
  })

  it('refuses a blank customer before any request', async () => {
    await expect(linkSimulatedPhone(service.client, '  ')).rejects.toMatchObject({
      code: 'invalid_input',
      field: 'externalId',
    })
  })
})
