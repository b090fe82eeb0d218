/**
 * The README and the docs pages as the published package carries them: the
 * README is a short first page, every link resolves from inside the tarball
 * (a relative link must name a file in `files`) or is absolute, and the
 * commands they promise exist.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const readme = readFileSync(`${root}README.md`, 'utf8')
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  files: string[]
  scripts: Record<string, string>
  repository?: { url?: string }
}
/** README, CHANGELOG and every docs page, each relative to the package root. */
const pages = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(`${root}docs`)
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]
const blob = 'https://github.com/Pushary/pushary-mastra/blob/main/'

describe('the published README and docs pages', () => {
  it('ship every page they link, and link nothing that is dead inside the published package', () => {
    const shipped = (file: string) =>
      pkg.files.some((entry) => file === entry || file.startsWith(`${entry}/`))
    expect(pages.filter((page) => !shipped(page))).toEqual([])
    let inRepo = 0
    for (const page of pages) {
      const text = readFileSync(`${root}${page}`, 'utf8')
      const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string)
      const relativeFiles = links
        .filter((link) => !/^(https?:|#|mailto:)/.test(link))
        .map((link) => relative(root, normalize(join(root, dirname(page), link.split('#')[0]!))))
      expect(
        relativeFiles.filter((file) => !shipped(file) || !existsSync(`${root}${file}`)),
        page,
      ).toEqual([])
      for (const link of links.filter((each) => each.startsWith(blob))) {
        inRepo += 1
        expect(existsSync(`${root}${link.slice(blob.length).split('#')[0]}`), `${page}: ${link}`).toBe(true)
      }
    }
    expect(inRepo).toBeGreaterThan(0)
    expect(pkg.repository?.url).toContain('github.com/Pushary/pushary-mastra')
  })

  it('resolves every page#anchor link to a heading of that page', () => {
    const slug = (heading: string) =>
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-')
    const anchorsOf = (page: string) =>
      new Set(
        [...readFileSync(`${root}${page}`, 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((match) =>
          slug(match[1]!),
        ),
      )
    const broken: string[] = []
    for (const page of pages) {
      const text = readFileSync(`${root}${page}`, 'utf8')
      for (const [, link] of text.matchAll(/\]\(([^)\s]*#[^)\s]+)\)/g)) {
        if (/^https?:/.test(link!)) continue
        const [file, anchor] = link!.split('#') as [string, string]
        const target = file ? relative(root, normalize(join(root, dirname(page), file))) : page
        if (!existsSync(`${root}${target}`) || !anchorsOf(target).has(anchor)) broken.push(`${page}: ${link}`)
      }
    }
    expect(broken).toEqual([])
  })

  it('keeps the README a short first page: at most 120 lines, linking every docs page', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(120)
    const docs = pages.filter((page) => page.startsWith('docs/'))
    expect(docs.filter((page) => !readme.includes(`](${page})`))).toEqual([])
    expect(readme).toContain('## Your first approval')
    expect(readme).toContain('](docs/first-approval.md)')
  })

  it("runs the walk-through's commands in its first-approval path, in order (the walk-through's own test runs them)", () => {
    const commands = (markdown: string) =>
      [...markdown.matchAll(/```sh\n([^`]*)```/g)]
        .flatMap((match) => (match[1] ?? '').split('\n'))
        .map((line) => line.replace(/\s+#.*$/, '').trim())
        .filter((line) => line !== '' && !line.startsWith('export '))
    const section = readme.slice(readme.indexOf('## Your first approval'), readme.indexOf('## Documentation'))
    const guide = readFileSync(`${root}docs/first-approval.md`, 'utf8')
    expect(commands(section)).toEqual(commands(guide))
  })

  it('starts with the two set-up commands, and npm test runs the restart and live-HTTP checks', () => {
    const firstBlocks = [...readme.matchAll(/```sh\n([^`]*)```/g)]
      .slice(0, 2)
      .map((match) => match[1]?.trim())
    expect(firstBlocks).toEqual(['npm ci && npm run demo', 'npm test'])
    // npm test runs every stage even when one fails (scripts/run-tests.mjs).
    expect(pkg.scripts.test).toBe('node scripts/run-tests.mjs')
    const stages = readFileSync(`${root}scripts/run-tests.mjs`, 'utf8')
    expect(stages).toContain("['npm', 'run', 'test:restart']")
    expect(stages).toContain("['npm', 'run', 'test:live-http']")
    // The durable agent example's commands are on the agents page.
    const agents = readFileSync(`${root}docs/agents.md`, 'utf8')
    expect(agents).toContain('node examples/durable-agent.mjs')
    expect(existsSync(`${root}examples/durable-agent.mjs`)).toBe(true)
  })
})
