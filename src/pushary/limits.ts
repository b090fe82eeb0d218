/**
 * Limits of the decision API and of this package's schemas (reference §1.9).
 * One table so the client, the schemas and the local service agree.
 *
 * @example
 * if (externalId.length > PUSHARY_LIMITS.externalIdMax) throw new Error('too long')
 */
export const PUSHARY_LIMITS = {
  questionMax: 500,
  optionsMax: 20,
  optionMax: 200,
  contextMax: 2000,
  parametersMaxKeys: 32,
  parameterKeyMax: 64,
  parameterStringMax: 200,
  actorMax: 120,
  environmentMax: 40,
  externalIdMax: 256,
  placeholderMax: 200,
  agentNameMax: 120,
  longPollMaxSeconds: 55,
  askWindowMaxSeconds: 50,
} as const

/**
 * Type of {@link PUSHARY_LIMITS}.
 *
 * @example
 * const limits: PusharyLimits = PUSHARY_LIMITS
 */
export type PusharyLimits = typeof PUSHARY_LIMITS
