/**
 * The client's own check that a decision handed back for an idempotency key
 * is the one it asked for. A service that returns the decision a key was
 * first used for (another question, another customer) would otherwise turn
 * someone else's `yes` into approval of a question nobody was shown.
 */
import type { CreateDecisionInput } from './decision-schemas.js'
import { PusharyError } from './errors.js'
import type { Decision, DecisionResult } from './wire-responses.js'

/**
 * A create returned a decision that is not the one asked for: its question,
 * type, options or customer differ from the request. Stop: the decision's
 * answer says nothing about this question. Use a fresh idempotency key.
 *
 * @example
 * try { await client.decisions.ask(input) } catch (error) {
 *   if (error instanceof PusharyReplayMismatchError) console.error(error.field)
 * }
 */
export class PusharyReplayMismatchError extends PusharyError {
  override name = 'PusharyReplayMismatchError'
  declare readonly code: 'idempotency_key_reused'
  readonly operation: string
  /** The first field that differs: `question`, `type`, `options` or `externalId`. */
  readonly field: string
  readonly decisionId: string

  constructor(input: { operation: string; field: string; decisionId: string }) {
    super(
      'idempotency_key_reused',
      `Pushary ${input.operation}: the service returned decision ${input.decisionId} for this idempotency key, but its ${input.field} differs from the request (field "${input.field}"); it was asked for something else, so its answer is not used`,
    )
    this.operation = input.operation
    this.field = input.field
    this.decisionId = input.decisionId
  }
}

type Asked = Pick<CreateDecisionInput, 'question' | 'type' | 'options' | 'externalId'>
type Returned = Partial<Pick<Decision, 'question' | 'type' | 'options' | 'externalId'>>

/** The first field of `returned` that contradicts `asked`; absent or null fields are unknown, not a mismatch. */
function firstMismatch(asked: Asked, returned: Returned): string | null {
  const type = asked.type ?? 'confirm'
  // Compared trimmed: a service may store the question without surrounding whitespace.
  if (returned.question !== undefined && returned.question.trim() !== asked.question.trim()) return 'question'
  if (returned.type !== undefined && returned.type !== type) return 'type'
  if (returned.options !== undefined && returned.options !== null) {
    const options = type === 'select' ? (asked.options ?? []) : []
    const same =
      returned.options.length === options.length &&
      returned.options.every((option, index) => option === options[index])
    if (!same) return 'options'
  }
  if (
    returned.externalId !== undefined &&
    returned.externalId !== null &&
    returned.externalId !== (asked.externalId ?? null)
  ) {
    return 'externalId'
  }
  return null
}

/**
 * Confirms that `created` answers `asked` (the validated create body). The
 * fields the create response carries are compared always; when the service
 * says it replayed an existing decision (`idempotent: true`), the decision is
 * read back with `read` and its options and customer are compared too.
 * Returns `created` unchanged, or throws {@link PusharyReplayMismatchError}.
 *
 * @example
 * const created = await confirmReplay(body, await send(), 'decisions.create', (id) => get(id))
 */
export async function confirmReplay(
  asked: Asked,
  created: DecisionResult,
  operation: string,
  read: (decisionId: string) => Promise<Decision>,
): Promise<DecisionResult> {
  const refuse = (field: string) =>
    new PusharyReplayMismatchError({ operation, field, decisionId: created.decisionId })
  const early = firstMismatch(asked, { question: created.question, type: created.type })
  if (early !== null) throw refuse(early)
  if (created.idempotent === true) {
    const field = firstMismatch(asked, await read(created.decisionId))
    if (field !== null) throw refuse(field)
  }
  return created
}
