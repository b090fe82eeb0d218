/**
 * Policy verdicts for `POST /authorize`. Rules come from a JSON file and must
 * name the action exactly: there is no wildcard, so an action no rule names
 * always needs a person. A rule whose condition reads a missing parameter does
 * not match, which also escalates instead of allowing. Deny beats allow.
 */
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { z } from 'zod/v4'
import type { AuthorizeInput } from '../pushary/decision-schemas.js'
import type { AuthorizationEvaluation } from '../pushary/wire-responses.js'
import { PusharyDevServerError } from './dev-server-error.js'

const scalar = z.union([z.string(), z.number(), z.boolean()])

const conditionSchema = z.discriminatedUnion('operator', [
  z.object({ parameter: z.string().min(1), operator: z.enum(['eq', 'neq']), value: scalar }),
  z.object({ parameter: z.string().min(1), operator: z.enum(['lt', 'lte', 'gt', 'gte']), value: z.number() }),
  z.object({ parameter: z.string().min(1), operator: z.literal('in'), value: z.array(scalar).min(1) }),
])

/**
 * One rule of a policy file. `toolName` is matched exactly; every condition
 * must hold. `name` defaults to `toolName`.
 *
 * @example
 * policyRuleSchema.parse({ toolName: 'refund.create', effect: 'allow',
 *   conditions: [{ parameter: 'amountMinor', operator: 'lte', value: 5000 }] })
 */
export const policyRuleSchema = z.object({
  name: z.string().trim().min(1).max(120).optional(),
  toolName: z.string().trim().min(1).max(200),
  effect: z.enum(['allow', 'deny']),
  conditions: z.array(conditionSchema).max(32).default([]),
})
/** @example const rule: PolicyRule = { toolName: 'deploy', effect: 'deny', conditions: [] } */
export type PolicyRule = z.output<typeof policyRuleSchema>

/**
 * A policy file: `{ "rules": [...] }`.
 *
 * @example
 * policyFileSchema.parse({ rules: [{ toolName: 'db.drop', effect: 'deny' }] })
 */
export const policyFileSchema = z.object({ rules: z.array(policyRuleSchema).max(1_000) })
/** @example const policy: PolicyFile = { rules: [] } */
export type PolicyFile = z.output<typeof policyFileSchema>

/**
 * Reads and validates a policy file; throws `PusharyDevServerError('invalid_policy')`
 * naming the path of the first bad entry.
 *
 * @example
 * const policy = await loadPolicyFile('./policy.json')
 */
export async function loadPolicyFile(path: string): Promise<PolicyFile> {
  let raw: string
  try {
    raw = await readFile(path, 'utf8')
  } catch (cause) {
    throw new PusharyDevServerError({
      code: 'invalid_policy',
      field: 'policyPath',
      message: `cannot read policy file ${path}`,
      cause,
    })
  }
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch (cause) {
    throw new PusharyDevServerError({
      code: 'invalid_policy',
      field: 'policyPath',
      message: `policy file ${path} is not valid JSON`,
      cause,
    })
  }
  const parsed = policyFileSchema.safeParse(json)
  if (!parsed.success) {
    const first = parsed.error.issues[0]
    const where = first?.path.map(String).join('.') ?? ''
    throw new PusharyDevServerError({
      code: 'invalid_policy',
      field: where === '' ? 'policyPath' : `policyPath:${where}`,
      message: `policy file ${path} is invalid: ${first?.message ?? 'bad shape'}`,
      issues: parsed.error.issues.map((issue) => ({ path: [...issue.path], message: issue.message })),
      cause: parsed.error,
    })
  }
  return parsed.data
}

function conditionHolds(
  condition: PolicyRule['conditions'][number],
  parameters: Record<string, string | number | boolean>,
): boolean {
  if (!Object.hasOwn(parameters, condition.parameter)) return false
  const actual = parameters[condition.parameter]
  switch (condition.operator) {
    case 'eq':
      return actual === condition.value
    case 'neq':
      return actual !== condition.value
    case 'in':
      return condition.value.includes(actual as string | number | boolean)
    case 'lt':
      return typeof actual === 'number' && actual < condition.value
    case 'lte':
      return typeof actual === 'number' && actual <= condition.value
    case 'gt':
      return typeof actual === 'number' && actual > condition.value
    case 'gte':
      return typeof actual === 'number' && actual >= condition.value
    default: {
      const unreachable: never = condition
      return unreachable
    }
  }
}

/**
 * Evaluates a validated authorize request against a policy.
 *
 * @example
 * evaluatePolicy({ rules: [] }, { toolName: 'refund.create' }).verdict // 'requires_human'
 */
export function evaluatePolicy(policy: PolicyFile, input: AuthorizeInput): AuthorizationEvaluation {
  const parameters = input.parameters ?? {}
  const matching = policy.rules.filter(
    (rule) => rule.toolName === input.toolName && rule.conditions.every((c) => conditionHolds(c, parameters)),
  )
  const rule = matching.find((r) => r.effect === 'deny') ?? matching.find((r) => r.effect === 'allow')
  if (rule === undefined) {
    return {
      verdict: 'requires_human',
      policy: null,
      reason: `No policy rule allows or denies ${input.toolName}; a person must decide.`,
      authorizationId: null,
    }
  }
  const name = rule.name ?? rule.toolName
  return {
    verdict: rule.effect,
    policy: name,
    reason: `${rule.effect === 'deny' ? 'Denied' : 'Allowed'} by policy rule ${name}.`,
    authorizationId: `auth_${randomBytes(12).toString('hex')}`,
  }
}
