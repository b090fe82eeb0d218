/**
 * docs/testing.md shows the user-style test as it runs: its one ```ts block
 * is test/testing/approvals.test.ts, byte for byte.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

const root = new URL('../../', import.meta.url)
const read = (file: string) => readFileSync(new URL(file, root), 'utf8')

describe('docs/testing.md', () => {
  it('shows test/testing/approvals.test.ts exactly, under its sample marker', () => {
    const page = read('docs/testing.md')
    const block = /<!-- sample: test\/testing\/approvals\.test\.ts -->\n```ts\n([\s\S]*?)\n```\n/.exec(page)
    expect(block, 'the marked ```ts block').not.toBeNull()
    expect(block![1]).toBe(read('test/testing/approvals.test.ts').replace(/\n$/, ''))
  })

  it('opens with what it is for and a link back to the README', () => {
    const [title, intro] = read('docs/testing.md').split('\n\n')
    expect(title).toBe('# Testing your approvals')
    expect(intro).toContain('](../README.md)')
  })
})
