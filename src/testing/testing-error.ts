/**
 * The one error class of the testing entry. Its `code` tells a failing test
 * what went wrong in the harness (as opposed to the code under test).
 */
import { PusharyError } from '@pushary/mastra'

/**
 * Closed set of harness failures.
 *
 * @example
 * const code: PusharyTestingErrorCode = 'no_such_control'
 */
export type PusharyTestingErrorCode =
  /** Bad input to a testing helper, before any request. */
  | 'invalid_input'
  /** The service did not answer within the wait. */
  | 'service_not_ready'
  /** The enrollment tap or a page request was refused: the phone is not (or no longer) linked. */
  | 'phone_not_linked'
  /** The card does not offer what the test asked to tap (Approve on a select, an option not listed). */
  | 'no_such_control'
  /** No question reached the phone within the wait. */
  | 'no_question'
  /** The reviewer page answered with something the phone cannot read. */
  | 'unexpected_page'

/**
 * Thrown by the testing helpers. `field` names the argument or the part of
 * the page at fault; `operation` the helper.
 *
 * @example
 * try { await phone.choose(decisionId, 'refund twice') } catch (error) {
 *   if (error instanceof PusharyTestingError && error.code === 'no_such_control') console.error(error.message)
 * }
 */
export class PusharyTestingError extends PusharyError {
  override name = 'PusharyTestingError'
  declare readonly code: PusharyTestingErrorCode
  readonly field: string
  readonly operation: string

  constructor(input: {
    code: PusharyTestingErrorCode
    operation: string
    field: string
    message: string
    cause?: unknown
  }) {
    const where = input.field === '' ? '' : ` (field "${input.field}")`
    super(input.code, `Pushary testing ${input.operation}: ${input.message}${where}`, { cause: input.cause })
    this.field = input.field
    this.operation = input.operation
  }
}
