import { registerApiRoute } from '@mastra/core/server'
import { PusharyValidationError } from '../pushary/errors.js'
import type { PusharyDispatcher } from './dispatch-types.js'

function invalid(field: string, message: string): never {
  throw new PusharyValidationError({
    code: 'invalid_decision_input',
    operation: 'pusharyCallbackRoute',
    field,
    message,
  })
}

/**
 * The callback endpoint as a Mastra server route, so a `mastra dev` app gets
 * it in one line. Mastra's own auth is skipped on this route on purpose: the
 * service cannot log in, and the HMAC signature is the authentication
 * (a forged or missing signature gets 401 from the dispatcher).
 *
 * The dispatcher needs the Mastra instance and Mastra's config needs the
 * route, so the route also takes a function returning the dispatcher: it is
 * called on the first callback, long after both exist.
 *
 * @example
 * const mastra: Mastra = new Mastra({ workflows, storage, server: { apiRoutes: [pusharyCallbackRoute(() => dispatcher)] } })
 * const dispatcher = createPusharyDispatcher({ mastra, client, store, webhookSecret })
 */
export function pusharyCallbackRoute(
  dispatcher: PusharyDispatcher | (() => PusharyDispatcher),
  opts: { path?: string } = {},
) {
  const path = opts.path ?? '/pushary/callback'
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('/api/')) {
    invalid(
      'opts.path',
      'the path must start with "/" and must not be under Mastra\'s reserved "/api/" prefix',
    )
  }
  if (typeof dispatcher !== 'function' && typeof dispatcher?.handleCallback !== 'function') {
    invalid('dispatcher', 'pass the dispatcher, or a function returning it')
  }
  const resolve = (): PusharyDispatcher => {
    const resolved = typeof dispatcher === 'function' ? dispatcher() : dispatcher
    if (typeof resolved?.handleCallback !== 'function') {
      invalid('dispatcher', 'the function passed to pusharyCallbackRoute returned no dispatcher')
    }
    return resolved
  }
  return registerApiRoute(path, {
    method: 'POST',
    requiresAuth: false,
    handler: (context) => resolve().handleCallback(context.req.raw),
  })
}
