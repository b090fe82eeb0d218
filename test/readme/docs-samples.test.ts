/**
 * Every TypeScript sample of the docs pages is code a test runs. A sample
 * block is preceded by `<!-- sample: <file> -->`; the block must be exactly
 * the part of that file between `// --- sample ---` and `// --- end of
 * sample ---` (the samples in test/readme/samples), or, for an excerpt of an
 * example program, the same lines at one indentation; and a test must run
 * that file. Each capability page starts by saying what it is for, links back
 * to the README, and carries at least one sample.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const read = (file: string) => readFileSync(`${root}${file}`, 'utf8')

/** The capability pages, the first-approval walk-through and the testing page. */
const pages = [
  'concepts',
  'workflows',
  'batches',
  'agents',
  'several-hosts',
  'permits',
  'local-service',
  'security',
  'operations',
  'reference',
  'examples',
  'first-approval',
  'testing',
].map((name) => `docs/${name}.md`)

interface Sample {
  page: string
  file: string | undefined
  code: string
}

function dedent(lines: string[]): string[] {
  const indent = Math.min(...lines.filter((line) => line.trim()).map((line) => line.search(/\S/)))
  return lines.map((line) => line.slice(indent))
}

/** Every ```ts block of a page, with the file its marker names. */
function samplesOf(page: string): Sample[] {
  const lines = read(page).split('\n')
  const found: Sample[] = []
  for (let i = 0; i < lines.length; i += 1) {
    if (lines[i]!.trim() !== '```ts') continue
    const end = lines.findIndex((line, j) => j > i && line.trim() === '```')
    const marker = /^<!-- sample: (\S+) -->$/.exec(lines[i - 1]?.trim() ?? '')
    found.push({ page, file: marker?.[1], code: dedent(lines.slice(i + 1, end)).join('\n') })
    i = end
  }
  return found
}

/** The marked region of a sample module, dedented. */
function regionOf(source: string): string | undefined {
  const match = /^[ \t]*\/\/ --- sample ---\n([\s\S]*?)^[ \t]*\/\/ --- end of sample ---/m.exec(source)
  return match ? dedent(match[1]!.replace(/\n$/, '').split('\n')).join('\n') : undefined
}

/** True when `code` appears in `source` as consecutive lines at one indentation. */
function isExcerptOf(code: string, source: string): boolean {
  const want = code.split('\n')
  const have = source.split('\n')
  return have.some((line, start) => {
    if (line.trim() !== want[0]!.trim()) return false
    const indent = line.slice(0, line.search(/\S/))
    return want.every((wanted, k) => (have[start + k] ?? null) === (wanted ? indent + wanted : ''))
  })
}

const testFiles = (function list(dir: string): string[] {
  return readdirSync(`${root}${dir}`, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? list(`${dir}/${entry.name}`)
      : entry.name.endsWith('.test.ts')
        ? [`${dir}/${entry.name}`]
        : [],
  )
})('test')
const testSources = testFiles.map(read)

/**
 * A test imports the sample module (by path or by `runSample('<name>')`), or
 * runs the example program, or runs a program beside it that imports it.
 */
function isRunByATest(file: string): boolean {
  const mentioned = (needle: string) => testSources.some((source) => source.includes(needle))
  const sample = /^test\/readme\/samples\/(.+)\.ts$/.exec(file)
  if (sample) return mentioned(`samples/${sample[1]}.js`) || mentioned(`'${sample[1]}'`)
  if (mentioned(file)) return true
  const dir = file.slice(0, file.lastIndexOf('/'))
  const name = file.slice(dir.length + 1).replace(/\.ts$/, '.js')
  return readdirSync(`${root}${dir}`)
    .map((sibling) => `${dir}/${sibling}`)
    .some((program) => mentioned(program) && read(program).includes(`from './${name}'`))
}

const samples = pages.flatMap(samplesOf)

describe('the docs samples', () => {
  it('finds the samples of every capability page', () => {
    expect(samples.length).toBeGreaterThanOrEqual(pages.length)
    expect(pages.filter((page) => !samples.some((sample) => sample.page === page))).toEqual([])
  })

  it.each(samples.map((sample, index) => [`${sample.page} #${index}`, sample] as const))(
    '%s names the file it comes from, is that file’s code exactly, and a test runs that file',
    (_, sample) => {
      expect(sample.file, 'a <!-- sample: <file> --> line right above the block').toBeDefined()
      const source = read(sample.file!)
      const region = regionOf(source)
      if (region !== undefined) expect(sample.code).toBe(region)
      else expect(isExcerptOf(sample.code, source), `not an excerpt of ${sample.file}`).toBe(true)
      expect(isRunByATest(sample.file!), `no test runs ${sample.file}`).toBe(true)
    },
  )

  it('has every sample module of test/readme/samples on a docs page', () => {
    const shown = new Set(samples.map((sample) => sample.file))
    const modules = readdirSync(`${root}test/readme/samples`)
      .map((name) => `test/readme/samples/${name}`)
      .filter((file) => regionOf(read(file)) !== undefined)
    expect(modules.filter((file) => !shown.has(file))).toEqual([])
  })

  it.each(pages)('%s opens with what it is for and a link back to the README', (page) => {
    const [title, , ...rest] = read(page).split('\n')
    expect(title).toMatch(/^# \S/)
    const intro = rest.slice(0, rest.indexOf('')).join(' ')
    expect(intro.length).toBeGreaterThan(80)
    expect(intro).toContain('](../README.md)')
  })
})

describe('the tie itself', () => {
  it('tells a sample that drifted from its file from one that did not', () => {
    const source = [
      '// prelude',
      '// --- sample ---',
      'const a = 1',
      '  call(a)',
      '// --- end of sample ---',
    ].join('\n')
    expect(regionOf(source)).toBe('const a = 1\n  call(a)')
    expect(regionOf(source)).not.toBe('const a = 2\n  call(a)')
    expect(isExcerptOf('b()\n  c()', 'function f() {\n  b()\n    c()\n}')).toBe(true)
    expect(isExcerptOf('b()\n c()', 'function f() {\n  b()\n    c()\n}')).toBe(false)
  })
})
