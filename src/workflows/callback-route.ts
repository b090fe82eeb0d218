import { registerApiRoute } from '@mastra/core/server'
import { PusharyValidationError } from '../pushary/errors.js'
import type { PusharyDispatcher } from './dispatch-types.js'

/**
 * The callback endpoint as a Mastra server route, so a `mastra dev` app gets
 * it in one line. Mastra's own auth is skipped on this route on purpose: the
 * service cannot log in, and the HMAC signature is the authentication
 * (a forged or missing signature gets 401 from the dispatcher).
 *
 * @example
 * new Mastra({ server: { apiRoutes: [pusharyCallbackRoute(dispatcher)] }, workflows, storage })
 */
export function pusharyCallbackRoute(dispatcher: PusharyDispatcher, opts: { path?: string } = {}) {
  const path = opts.path ?? '/pushary/callback'
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('/api/')) {
    throw new PusharyValidationError({
      code: 'invalid_decision_input',
      operation: 'pusharyCallbackRoute',
      field: 'opts.path',
      message: 'the path must start with "/" and must not be under Mastra\'s reserved "/api/" prefix',
    })
  }
  return registerApiRoute(path, {
    method: 'POST',
    requiresAuth: false,
    handler: (context) => dispatcher.handleCallback(context.req.raw),
  })
}
