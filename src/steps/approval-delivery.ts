/**
 * How a question reaches its person, and what the approval step leaves for
 * the steps after it. With `onFallback`, the step preflights the customer
 * (`GET /reachability`); a customer named but without a device (`fallback`)
 * gets a decision created with `approvalUrl: true`, and the application
 * delivers that link. The resume pass names the decision it answered in the
 * request context, for a permit step (`withPusharyPermit`).
 */
import type { Mastra } from '@mastra/core/mastra'
import type { PusharyClient } from '../pushary/client.js'
import { PusharyValidationError } from '../pushary/errors.js'
import { type AskedLogFields, logAsked } from './approval-log.js'
import { PUSHARY_APPROVED_CONTEXT_KEY } from './permit-step.js'

/**
 * What `onFallback` receives: a short-lived link bound to one decision; send
 * it to the customer (e-mail, SMS, chat). Whoever has the link can answer.
 *
 * @example
 * const onFallback = async (link: PusharyFallbackLink) => mailer.send(link.externalId, link.approvalUrl)
 */
export interface PusharyFallbackLink {
  approvalUrl: string
  decisionId: string
  externalId: string
  expiresAt?: string
  workflowId: string
  runId: string
  stepId: string
}

type OnFallback = (link: PusharyFallbackLink) => void | Promise<void>

/**
 * The `onFallback` option, checked in the step factory.
 *
 * @example
 * const onFallback = checkOnFallback(opts.onFallback)
 */
export function checkOnFallback(value: unknown): OnFallback | undefined {
  if (value === undefined || typeof value === 'function') return value as OnFallback | undefined
  throw new PusharyValidationError({
    code: 'invalid_options',
    operation: 'pusharyApprovalStep',
    field: 'opts.onFallback',
    message: 'onFallback must be a function that delivers the approval link',
  })
}

/**
 * `fallback` only when `onFallback` is set and the service says the customer
 * has no device; every other answer (`push`, `unreachable`, unknown) asks as
 * before, so the service's own rules (`requireReachable`) still apply.
 *
 * @example
 * const path = await deliveryPath(client, 'customer_1', onFallback)
 */
export async function deliveryPath(
  client: Pick<PusharyClient, 'reachability'>,
  externalId: string,
  onFallback: OnFallback | undefined,
): Promise<'push' | 'fallback'> {
  if (!onFallback) return 'push'
  return (await client.reachability(externalId)).deliverability === 'fallback' ? 'fallback' : 'push'
}

/**
 * Request-context key under which a caller that starts the approval step's
 * run itself (the agent review workflow) passes its `onFallback`: a function
 * cannot travel in the step's input.
 *
 * @example
 * requestContext.set(PUSHARY_FALLBACK_CONTEXT_KEY, onFallback)
 */
export const PUSHARY_FALLBACK_CONTEXT_KEY = 'pushary.on-fallback'

/**
 * The step's own `onFallback`, else the one its run was started with.
 *
 * @example
 * const fallback = fallbackOf(onFallback, requestContext)
 */
export function fallbackOf(
  own: OnFallback | undefined,
  requestContext: { get(key: never): unknown } | undefined,
): OnFallback | undefined {
  if (own) return own
  const passed = requestContext?.get(PUSHARY_FALLBACK_CONTEXT_KEY as never)
  return typeof passed === 'function' ? (passed as OnFallback) : undefined
}

/**
 * Hands the link to `onFallback` (after the review was saved, so an answer
 * through it always finds its binding) and logs which path was taken.
 *
 * @example
 * await deliverFallback(mastra, path, onFallback, created, { decisionId, externalId, workflowId, runId, stepId })
 */
export async function deliverFallback(
  mastra: Mastra | undefined,
  path: 'push' | 'fallback',
  onFallback: OnFallback | undefined,
  created: { approvalUrl?: string | undefined },
  /** The review just saved (or its fields): the link names its decision, customer, expiry and step. */
  asked: Omit<PusharyFallbackLink, 'approvalUrl'>,
  /** What the `asked` line names beside the run: the card's tool, the agent call an agent review asks about. */
  about: Pick<AskedLogFields, 'toolName' | 'agent'> = {},
): Promise<void> {
  const { decisionId, externalId, workflowId, runId, stepId, expiresAt } = asked
  const link = {
    decisionId,
    externalId,
    workflowId,
    runId,
    stepId,
    ...(expiresAt === undefined ? {} : { expiresAt }),
  }
  if (path === 'fallback' && onFallback) {
    if (!created.approvalUrl) {
      throw new PusharyValidationError({
        code: 'invalid_response',
        operation: 'pusharyApprovalStep',
        field: 'approvalUrl',
        message: `decision ${link.decisionId} was created for a customer without a device, but the service sent no approval link`,
      })
    }
    await onFallback({ approvalUrl: created.approvalUrl, ...link })
  }
  logAsked(mastra, {
    decisionId: link.decisionId,
    workflowId: link.workflowId,
    runId: link.runId,
    stepId: link.stepId,
    delivery: path,
    ...about,
  })
}

/**
 * Names the decision behind this step's answer for a later permit step
 * (`withPusharyPermit`), which proves it against the service before spending it.
 */
export function noteApprovedDecision(
  requestContext: { get(key: never): unknown; set(key: never, value: never): void } | undefined,
  stepId: string,
  decisionId: string,
): void {
  if (!requestContext) return
  const earlier = requestContext.get(PUSHARY_APPROVED_CONTEXT_KEY as never)
  const named = typeof earlier === 'object' && earlier !== null ? earlier : {}
  requestContext.set(PUSHARY_APPROVED_CONTEXT_KEY as never, { ...named, [stepId]: decisionId } as never)
}
