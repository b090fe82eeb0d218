/**
 * The platform routes beside the decision routes: the policy verdict
 * (`POST /authorize`), permits (`POST /authorizations/consume`), receipts
 * (`POST /authorizations/{permitId}/receipt`) and bound keys (`/keys`), in
 * the hosted shapes. A refused consume is 409 with `refusal` (and
 * `executionState` when already consumed) beside the hosted error body.
 */
import { Hono } from 'hono'
import { z } from 'zod/v4'
import { type AuthorizeInput, authorizeInputSchema } from '../pushary/decision-schemas.js'
import { externalIdSchema } from '../pushary/identity.js'
import { consumeAuthorizationInputSchema, receiptInputSchema } from '../pushary/platform-schemas.js'
import { storableString } from '../pushary/text-rules.js'
import { apiError } from './api-errors.js'
import { invalidFromZod, readJsonObject } from './api-request.js'
import type { BoundKeys } from './bound-keys.js'
import type { PermitService } from './permits.js'
import { evaluatePolicy, type PolicyFile } from './policy.js'

/** What the platform routes need. */
export interface PlatformRouteDeps {
  policy: PolicyFile
  permits: PermitService
  keys: BoundKeys
}

const issueKeyBodySchema = z.object({
  externalId: externalIdSchema,
  name: storableString().trim().min(1).max(120).optional(),
  expiresInSeconds: z.number().finite().positive().optional(),
})

/**
 * Builds the platform sub-app, mounted on the API app after its key checks.
 *
 * @example
 * api.route('/', createPlatformRoutes({ policy, permits, keys }))
 */
export function createPlatformRoutes(deps: PlatformRouteDeps): Hono {
  const api = new Hono()

  api.post('/authorize', async (c) => {
    const body = await readJsonObject(c)
    if (!body.ok) return body.response
    const parsed = authorizeInputSchema.safeParse(body.value)
    if (!parsed.success) return invalidFromZod(c, parsed.error)
    const input: AuthorizeInput = parsed.data
    const verdict = evaluatePolicy(deps.policy, input)
    // Only an allow can be spent as a permit; a deny's id authorizes nothing.
    if (verdict.verdict === 'allow' && verdict.authorizationId !== null) {
      await deps.permits.rememberAllow(verdict.authorizationId, verdict.policy ?? input.toolName, input)
    }
    return c.json(verdict)
  })

  api.post('/authorizations/consume', async (c) => {
    const body = await readJsonObject(c)
    if (!body.ok) return body.response
    const parsed = consumeAuthorizationInputSchema.safeParse(body.value)
    if (!parsed.success) return invalidFromZod(c, parsed.error)
    const { authorizationId, ...action } = parsed.data
    const outcome = await deps.permits.consume(authorizationId, {
      toolName: action.toolName,
      toolTarget: action.toolTarget ?? null,
      actor: action.actor ?? null,
      environment: action.environment ?? null,
      externalId: action.externalId ?? null,
      parameters: action.parameters ?? null,
    })
    if (outcome.status === 'permitted') {
      return c.json({
        permitId: outcome.permitId,
        authority: outcome.authority,
        expiresAt: outcome.expiresAt,
      })
    }
    return apiError(c, 409, outcome.reason ?? outcome.refusal, outcome.message, {
      refusal: outcome.refusal,
      ...(outcome.field === undefined ? {} : { field: outcome.field }),
      ...(outcome.executionState === undefined ? {} : { executionState: outcome.executionState }),
    })
  })

  api.post('/authorizations/:permitId/receipt', async (c) => {
    const body = await readJsonObject(c)
    if (!body.ok) return body.response
    const parsed = receiptInputSchema.safeParse(body.value)
    if (!parsed.success) return invalidFromZod(c, parsed.error)
    const outcome = await deps.permits.receipt(
      c.req.param('permitId'),
      parsed.data.outcome,
      parsed.data.summary,
    )
    switch (outcome.status) {
      case 'not_found':
        return apiError(c, 404, 'not_found', 'Permit not found.')
      case 'expired':
        return apiError(c, 409, 'permit_expired', outcome.message)
      case 'recorded':
        return c.json({ executionState: outcome.executionState })
      default: {
        const unknown: never = outcome
        return unknown
      }
    }
  })

  api.post('/keys', async (c) => {
    const body = await readJsonObject(c)
    if (!body.ok) return body.response
    const parsed = issueKeyBodySchema.safeParse(body.value)
    if (!parsed.success) return invalidFromZod(c, parsed.error)
    return c.json(await deps.keys.issue(parsed.data), 201)
  })

  api.get('/keys', async (c) => c.json({ keys: await deps.keys.list() }))

  api.delete('/keys/:keyPrefix', async (c) => {
    const keyPrefix = c.req.param('keyPrefix')
    return c.json({ keyPrefix, revoked: await deps.keys.revoke(keyPrefix) })
  })

  return api
}
