/**
 * "Your first approval", followed as a user would, from the packed tarball:
 * `npm pack` the project (its `prepack` builds dist/), install the tarball in
 * an empty folder with the page's own install line, run the page's shell
 * commands as separate OS processes (the local service as a long-running
 * child, `connect` waiting for the phone, the app waiting for the answer),
 * and tap the links by HTTP as a person's browser does. The commands and the
 * app file are taken from the page's markdown, so the page cannot drift from
 * what is tested.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/** The page that holds the path (later possibly a README section). */
const GUIDE = 'docs/first-approval.md'
/** The app file of the page's one TypeScript block. */
const APP = 'examples/first-approval/app.ts'
const CUSTOMER = 'customer_1'
/** So the installs use the npm cache and print nothing extra. */
const NPM_INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund']

const root = fileURLToPath(new URL('../../', import.meta.url))
const guide = readFileSync(join(root, GUIDE), 'utf8')

function codeBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)]
    .filter((match) => match[1] === language)
    .map((match) => match[2] as string)
}

/** Every command of the page's sh blocks in order: comments dropped, `\` continuations joined. */
function guideCommands(): string[] {
  const lines = codeBlocks(guide, 'sh')
    .join('\n')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
  return lines.map((line) => line.replace(/\s+#.*$/, '').trim()).filter((line) => line !== '')
}

/** The environment of a fresh terminal: nothing from npm, vitest or a Pushary setup of this shell. */
function terminalEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|PUSHARY_|VITEST|NODE_OPTIONS$|INIT_CWD$|NODE_ENV$)/i.test(key)) continue
    env[key] = value
  }
  return env
}

interface Finished {
  code: number | null
  stdout: string
  stderr: string
}

/** A command run to its end in bash; rejects naming the command, its exit and its stderr. */
function runToEnd(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<Finished> {
  return new Promise((resolveRun, rejectRun) => {
    const child = spawn('bash', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', rejectRun)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code === 0) resolveRun({ code, stdout, stderr })
      else rejectRun(new Error(`\`${command}\` in ${cwd} exited ${code}\nstderr:\n${stderr.slice(-4000)}`))
    })
  })
}

/** Every long-running child, so none outlives the test. */
const running = new Set<{ pid: number; isDone: () => boolean }>()

/** A long-running command in its own process group, read as it prints. */
interface Running {
  output(): string
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray>
  exited: Promise<number | null>
  signal(signal: NodeJS.Signals): void
}

function start(command: string, cwd: string, env: NodeJS.ProcessEnv): Running {
  const child: ChildProcess = spawn('bash', ['-c', `exec ${command}`], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const listeners = new Set<() => void>()
  const append = (chunk: Buffer) => {
    output += chunk.toString()
    for (const listener of listeners) listener()
  }
  child.stdout?.on('data', append)
  child.stderr?.on('data', append)
  let done = false
  const exited = new Promise<number | null>((resolveExit) =>
    child.on('close', (code) => {
      done = true
      for (const listener of listeners) listener()
      resolveExit(code)
    }),
  )
  running.add({ pid: child.pid as number, isDone: () => done })
  return {
    output: () => output,
    exited,
    signal: (signal) => {
      if (!done) process.kill(-(child.pid as number), signal)
    },
    waitFor: (pattern, timeoutMs) =>
      new Promise((resolveWait, rejectWait) => {
        const check = () => {
          const match = output.match(pattern)
          if (match === null && !done) return
          listeners.delete(check)
          clearTimeout(timer)
          if (match !== null) resolveWait(match)
          else rejectWait(new Error(`\`${command}\` exited before printing ${pattern}:\n${output}`))
        }
        const timer = setTimeout(() => {
          listeners.delete(check)
          rejectWait(new Error(`\`${command}\` printed no ${pattern} in ${timeoutMs} ms:\n${output}`))
        }, timeoutMs)
        listeners.add(check)
        check()
      }),
  }
}

/** The person's browser: the enrollment link's "Link this phone" posts the link itself. */
async function tapLinkThisPhone(enrollmentLink: string): Promise<string> {
  const tapped = await fetch(enrollmentLink, { method: 'POST', redirect: 'manual' })
  expect(tapped.status).toBe(303)
  const cookie = (tapped.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
  expect(cookie).toMatch(/^pushary_device=/)
  return cookie
}

/** The decision page as the linked phone loaded it: its answer form and the value of each button. */
interface LoadedForm {
  action: string
  csrf: string
  buttons: Record<string, string>
  cookie: string
}

async function openDecisionPage(pageUrl: string, cookie: string): Promise<LoadedForm> {
  const page = await (await fetch(pageUrl, { headers: { cookie } })).text()
  const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1]
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1]
  if (action === undefined || csrf === undefined) throw new Error(`no answer form on ${pageUrl}:\n${page}`)
  const buttons: Record<string, string> = {}
  for (const match of page.matchAll(/<button type="submit" name="answer" value="([^"]+)"[^>]*>([^<]+)</g)) {
    buttons[(match[2] as string).trim()] = match[1] as string
  }
  return { action: new URL(action, pageUrl).href, csrf, buttons, cookie }
}

/** A tap on one button of the loaded form (again and again, as a person may). */
async function press(form: LoadedForm, label: 'Approve' | 'Deny'): Promise<{ status: number; page: string }> {
  const answer = form.buttons[label]
  if (answer === undefined) throw new Error(`no ${label} button on the page (${Object.keys(form.buttons)})`)
  const response = await fetch(form.action, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: form.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: form.csrf, answer }),
  })
  return { status: response.status, page: await response.text() }
}

function count(text: string, needle: string): number {
  return text.split(needle).length - 1
}

describe(`"Your first approval" (${GUIDE}) from the packed tarball`, () => {
  const work = mkdtempSync(join(tmpdir(), 'pushary-first-approval-'))
  let tarball = ''
  let packedFiles: string[] = []

  beforeAll(async () => {
    const packed = await runToEnd(
      `npm pack --json --pack-destination ${JSON.stringify(work)}`,
      root,
      terminalEnv(),
      300_000,
    )
    // The prepack build may print to stdout before npm's JSON.
    const json = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[/m))) as Array<{
      filename: string
      files: Array<{ path: string }>
    }>
    tarball = join(work, json[0]?.filename ?? '')
    packedFiles = json[0]?.files.map((file) => file.path) ?? []
  }, 600_000)

  afterAll(() => {
    for (const process_ of running) {
      if (!process_.isDone()) process.kill(-process_.pid, 'SIGKILL')
    }
    rmSync(work, { recursive: true, force: true })
  })

  it('packs a tarball that holds the built package', () => {
    expect(existsSync(tarball)).toBe(true)
    expect(packedFiles).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/cli.js']))
  })

  it("installs with the README's install line and shows the example app verbatim", () => {
    const install = guideCommands().find((command) => / @pushary\/mastra\b/.test(command))
    expect(install).toBeDefined()
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain(install)
    expect(codeBlocks(guide, 'ts')).toEqual([readFileSync(join(root, APP), 'utf8')])
  })

  it('reaches an approved refund that runs once, with only the commands on the page', async () => {
    const folder = join(work, 'my-first-approval')
    mkdirSync(folder)
    const env = terminalEnv()
    let service: Running | undefined
    let cookie = ''
    let linked = false
    let appCommand = ''
    let appOutput = ''

    for (const command of guideCommands()) {
      if (/^npx pushary-mastra dev\b/.test(command)) {
        // Any free port: 4100 may be a developer's own service or another test run.
        service = start(`${command} --port 0`, folder, env)
        await service.waitFor(/Press Ctrl-C to stop\./, 60_000)
      } else if (/^export \w+=/.test(command)) {
        // The person pastes the line the service printed, not the page's placeholder.
        const name = /^export (\w+)=/.exec(command)?.[1] as string
        const printed = new RegExp(`^\\s*export ${name}=(\\S+)$`, 'm').exec(service?.output() ?? '')
        expect(printed, `the service printed no "export ${name}=" line`).not.toBeNull()
        env[name] = printed?.[1]
      } else if (/^npx pushary-mastra connect\b/.test(command)) {
        const connect = start(command, folder, env)
        const [link] = await connect.waitFor(/https?:\/\/\S+\/e\/\S+/, 60_000)
        cookie = await tapLinkThisPhone(link)
        expect(await connect.exited).toBe(0)
        expect(connect.output()).toContain(`Linked: a phone is enrolled for "${CUSTOMER}"`)
        linked = true
      } else if (/^npx tsx \S+\.ts$/.test(command)) {
        writeFileSync(
          join(folder, basename(command.split(' ').at(-1) as string)),
          codeBlocks(guide, 'ts')[0] ?? '',
        )
        const app = start(command, folder, env)
        const [pageUrl] = await app.waitFor(/https?:\/\/\S+\/review\/dec_\w+/, 120_000)
        const form = await openDecisionPage(pageUrl, cookie)
        expect((await press(form, 'Approve')).status).toBe(303)
        // Tapping again (right away, and after the app ended) is refused and changes nothing.
        const again = await press(form, 'Approve')
        expect(again.status).toBe(409)
        expect(again.page).toContain('This decision has already been answered.')
        expect(await app.exited).toBe(0)
        appOutput = app.output()
        expect((await press(form, 'Deny')).status).toBe(409)
        appCommand = command
      } else {
        const npmInstall = /^npm (i|install)\b/.test(command)
        const line = npmInstall
          ? `${command.replace(/ @pushary\/mastra\b/, ` ${JSON.stringify(tarball)}`)} ${NPM_INSTALL_FLAGS.join(' ')}`
          : command
        await runToEnd(line, folder, env, 600_000)
      }
    }

    // Each step the path needs was on the page: the service, linking the phone, running the app.
    expect({ service: service !== undefined, linked, app: appCommand !== '' }).toEqual({
      service: true,
      linked: true,
      app: true,
    })
    expect(count(appOutput, 'Action ran: refunded EUR 48 on order_1001')).toBe(1)
    expect(appOutput).toMatch(/Run \S+ ended success \(resumed\)/)
    const refunds = readFileSync(join(folder, 'refunds.log'), 'utf8').trim().split('\n')
    expect(refunds).toHaveLength(1)
    // The package came from the tarball, not from this repository.
    const app = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>
    }
    expect(app.dependencies['@pushary/mastra']).toBe(`file:../${basename(tarball)}`)

    // The page's last step: run the app again and tap Deny; nothing is refunded.
    const again = start(appCommand, folder, env)
    const [secondPage] = await again.waitFor(/https?:\/\/\S+\/review\/dec_\w+/, 120_000)
    expect((await press(await openDecisionPage(secondPage, cookie), 'Deny')).status).toBe(303)
    expect(await again.exited).toBe(0)
    expect(again.output()).toContain('Not refunded: denied')
    expect(again.output()).not.toContain('Action ran')
    expect(readFileSync(join(folder, 'refunds.log'), 'utf8').trim().split('\n')).toHaveLength(1)

    // Ctrl-C in its terminal (SIGINT to the foreground group, npx included) stops the service cleanly.
    service?.signal('SIGINT')
    await service?.exited
    expect(service?.output()).toMatch(/Received SIGINT; stopping the Pushary dev server…\s+Stopped\./)
  }, 900_000)
})
