/**
 * The README as the published package carries it: every link resolves from
 * inside the tarball (a relative link must name a file in `files`) or is
 * absolute, and the commands it promises exist.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const readme = readFileSync(`${root}README.md`, 'utf8')
const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  files: string[]
  scripts: Record<string, string>
  repository?: { url?: string }
}

describe('the published README', () => {
  it('has no link that is dead inside the published package', () => {
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string)
    const relative = links.filter((link) => !/^(https?:|#|mailto:)/.test(link))
    const shipped = (link: string) =>
      pkg.files.some((entry) => link === entry || link.startsWith(`${entry}/`))
    expect(relative.filter((link) => !shipped(link) || !existsSync(`${root}${link}`))).toEqual([])
    const inRepo = links.filter((link) =>
      link.startsWith('https://github.com/Pushary/pushary-mastra/blob/main/'),
    )
    expect(inRepo.length).toBeGreaterThan(0)
    for (const link of inRepo) {
      expect(
        existsSync(`${root}${link.replace('https://github.com/Pushary/pushary-mastra/blob/main/', '')}`),
      ).toBe(true)
    }
    expect(pkg.repository?.url).toContain('github.com/Pushary/pushary-mastra')
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
    expect(readme).toContain('node examples/durable-agent.mjs')
    expect(existsSync(`${root}examples/durable-agent.mjs`)).toBe(true)
  })
})
