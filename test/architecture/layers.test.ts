import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SRC = join(import.meta.dirname, '../../src')

/**
 * Which rooms each room may import (ARCHITECTURE.md: `cli -> server, agents
 * -> workflows -> resume -> steps -> machines, store, pushary`). The resume
 * path is an engine below the rooms that compose approvals: a multi-item
 * parent or an agent review registers how it is resumed
 * (`resume/review-kinds.ts`), so `resume` never imports them.
 */
const ALLOWED: Record<string, readonly string[]> = {
  pushary: [],
  machines: ['pushary'],
  observability: ['pushary'],
  store: ['machines', 'pushary'],
  steps: ['observability', 'store', 'machines', 'pushary'],
  resume: ['steps', 'observability', 'store', 'machines', 'pushary'],
  workflows: ['resume', 'steps', 'observability', 'store', 'machines', 'pushary'],
  agents: ['workflows', 'resume', 'steps', 'observability', 'store', 'machines', 'pushary'],
  server: ['pushary'],
  // The review board reads the review store and recovers through the same
  // function as the CLI; it draws with the reviewer page's template and rules.
  board: ['server', 'resume', 'observability', 'store', 'machines', 'pushary'],
  cli: [
    'board',
    'server',
    'agents',
    'workflows',
    'resume',
    'steps',
    'observability',
    'store',
    'machines',
    'pushary',
  ],
  // `@pushary/mastra/testing` reaches the package only through its public
  // entry, by name (`'@pushary/mastra'`), never a room's module; no room imports it.
  testing: [],
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return path.endsWith('.ts') ? [path] : []
  })
}

function layerOf(file: string): string {
  const path = relative(SRC, file)
  const parts = path.split('/')
  return parts.length === 1 ? `root:${parts[0]!.replace(/\.ts$/, '')}` : parts[0]!
}

function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map(
    (match) => match[1]!,
  )
  return specifiers.map((specifier) => join(file, '..', specifier.replace(/\.js$/, '.ts')))
}

describe('module layering', () => {
  it('points every import inside src down the layers, never up or sideways', () => {
    const violations: string[] = []
    for (const file of sourceFiles(SRC)) {
      const from = layerOf(file)
      if (from === 'root:index') continue
      for (const target of relativeImports(file)) {
        const to = layerOf(target)
        if (to === from) continue
        if (!(ALLOWED[from] ?? []).includes(to))
          violations.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`)
      }
    }
    expect(violations).toEqual([])
  })

  it('has no import cycle among src modules, type-only imports and re-exports included', () => {
    const files = sourceFiles(SRC)
    const edges = new Map(files.map((file) => [file, relativeImports(file)]))
    const cycles: string[] = []
    // Depth-first search; a target still on the current path closes a cycle.
    const state = new Map<string, 'open' | 'done'>()
    const path: string[] = []
    const visit = (file: string): void => {
      state.set(file, 'open')
      path.push(file)
      for (const target of edges.get(file) ?? []) {
        if (state.get(target) === 'open') {
          cycles.push([...path.slice(path.indexOf(target)), target].map((f) => relative(SRC, f)).join(' -> '))
        } else if (!state.has(target)) {
          visit(target)
        }
      }
      path.pop()
      state.set(file, 'done')
    }
    for (const file of files) if (!state.has(file)) visit(file)
    expect(cycles).toEqual([])
  })

  it('keeps every module under 400 lines', () => {
    const long = sourceFiles(SRC)
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 400)
    expect(long).toEqual([])
  })

  it('exposes the public API only through src/index.ts (and the testing entry), every export named', () => {
    for (const entry of ['index.ts', 'testing/index.ts']) {
      expect(readFileSync(join(SRC, entry), 'utf8')).not.toMatch(/export\s+\*/)
    }
    const pkg = JSON.parse(readFileSync(join(SRC, '../package.json'), 'utf8')) as {
      exports: Record<string, unknown>
    }
    expect(Object.keys(pkg.exports).sort()).toEqual(['.', './package.json', './testing'])
  })

  it('keeps the testing entry out of the main entry, and on the public API only', () => {
    expect(relativeImports(join(SRC, 'index.ts')).filter((file) => layerOf(file) === 'testing')).toEqual([])
    const deepImports = sourceFiles(join(SRC, 'testing')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/from '(@pushary\/mastra\/[^']*)'/g)].map(
        (match) => `${relative(SRC, file)} -> ${match[1]}`,
      ),
    )
    expect(deepImports).toEqual([])
  })

  it.each([
    ['index.ts', 100],
    ['testing/index.ts', 15],
  ])('documents every export of %s with TSDoc carrying an @example', (entry, atLeast) => {
    const program = ts.createProgram([join(SRC, entry)], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
    })
    const checker = program.getTypeChecker()
    const index = program.getSourceFile(join(SRC, entry))!
    const exports = checker.getExportsOfModule(checker.getSymbolAtLocation(index)!)
    const undocumented = exports
      .filter((exported) => {
        const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
        return !(symbol.declarations ?? []).some((declaration) =>
          ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'example'),
        )
      })
      .map((exported) => exported.name)
    expect(exports.length).toBeGreaterThan(atLeast)
    expect(undocumented).toEqual([])
  })
})
