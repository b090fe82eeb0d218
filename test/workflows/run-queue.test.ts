import { describe, expect, it } from 'vitest'
import { createKeyedQueue } from '../../src/resume/run-queue.js'

describe('the per-run queue', () => {
  it('runs work of one key one after another and reports the key idle only once all of it settled', async () => {
    const queue = createKeyedQueue()
    const order: string[] = []
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    expect(queue.idle('run-1')).toBe(true)
    const first = queue.run('run-1', async () => {
      order.push('first:start')
      await gate
      order.push('first:end')
    })
    const second = queue.run('run-1', async () => {
      order.push('second')
      throw new Error('second failed')
    })
    const other = queue.run('run-2', async () => order.push('other'))
    expect(queue.idle('run-1')).toBe(false)
    await other
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(queue.idle('run-2')).toBe(true)
    expect(queue.idle('run-1')).toBe(false)
    release()
    await first
    await expect(second).rejects.toThrow('second failed')
    await new Promise((resolve) => setTimeout(resolve, 0))
    expect(queue.idle('run-1')).toBe(true)
    expect(order).toEqual(['first:start', 'other', 'first:end', 'second'])
  })
})
