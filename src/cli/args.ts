/**
 * The one argument parser of every `pushary-mastra` command: Node's
 * `util.parseArgs`, read through its tokens so every command refuses the
 * same things with the same words (an unknown option, a missing value, a
 * value given to a switch, a single-valued option given twice) and answers
 * `--help` / `-h` the same way.
 */
import { parseArgs } from 'node:util'

/** One option of a command, named without its leading `--`. */
export interface FlagSpec {
  readonly type: 'string' | 'boolean'
  /** May be given more than once (the values are kept in order). */
  readonly multiple?: boolean
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>

type FlagValue<Spec extends FlagSpec> = Spec['type'] extends 'boolean'
  ? boolean
  : Spec['multiple'] extends true
    ? string[]
    : string

/** What was given of each option; an option not given is absent. */
export type FlagValues<Flags extends FlagSpecs> = { -readonly [Name in keyof Flags]?: FlagValue<Flags[Name]> }

/** A refused argument: the message says what is wrong, `field` names the option or argument. */
export class CommandArgsError extends Error {
  override name = 'CommandArgsError'
  readonly field: string

  constructor(message: string, field: string) {
    super(message)
    this.field = field
  }
}

export type ParsedArgv<Flags extends FlagSpecs> =
  | { readonly help: true }
  | { readonly help: false; readonly values: FlagValues<Flags>; readonly positionals: readonly string[] }

/**
 * Splits `argv` into the options of `flags` and positional arguments, with
 * `--flag value` and `--flag=value` spellings. `--help` or `-h` anywhere
 * asks for the usage. A separate value that starts with `--` is taken for a
 * forgotten value (`--db --json`), as is an empty one. Throws
 * `CommandArgsError` naming the option.
 *
 * @example
 * parseCommandArgv(['list', '--db', 'dev.db'], { db: { type: 'string' } })
 * // { help: false, values: { db: 'dev.db' }, positionals: ['list'] }
 */
export function parseCommandArgv<Flags extends FlagSpecs>(
  argv: readonly string[],
  flags: Flags,
): ParsedArgv<Flags> {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  }
  for (const [name, spec] of Object.entries(flags)) options[name] = { type: spec.type }
  // Not strict: the tokens are checked below, so every refusal names the
  // option in this package's words instead of Node's.
  const { tokens } = parseArgs({
    args: [...argv],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  })
  if (tokens.some((token) => token.kind === 'option' && token.name === 'help')) return { help: true }
  const values: Record<string, string | boolean | string[]> = {}
  const positionals: string[] = []
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value)
    if (token.kind !== 'option') continue
    const spec = Object.hasOwn(flags, token.name) ? flags[token.name] : undefined
    if (spec === undefined) throw new CommandArgsError(`unknown option ${token.rawName}`, token.rawName)
    if (spec.type === 'boolean') {
      if (token.value !== undefined) {
        throw new CommandArgsError(`${token.rawName} takes no value`, token.rawName)
      }
      values[token.name] = true
      continue
    }
    const value = token.value
    if (value === undefined || value === '' || (!token.inlineValue && value.startsWith('--'))) {
      throw new CommandArgsError(`${token.rawName} needs a value`, token.rawName)
    }
    if (spec.multiple) values[token.name] = [...((values[token.name] as string[] | undefined) ?? []), value]
    else if (values[token.name] !== undefined) {
      throw new CommandArgsError(`${token.rawName} may be given once`, token.rawName)
    } else values[token.name] = value
  }
  return { help: false, values: values as FlagValues<Flags>, positionals }
}
