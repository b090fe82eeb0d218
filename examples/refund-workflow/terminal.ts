/** Terminal output of the demo: QR codes and a progress indicator. */
import qrcode from 'qrcode-terminal'

export function printQr(text: string): void {
  qrcode.generate(text, { small: true }, (code) => process.stdout.write(`${code}\n`))
}

/**
 * A spinner with elapsed seconds on a TTY; a dot every few seconds otherwise
 * (CI logs stay readable).
 */
export function startProgress(label: string): { stop(final: string): void } {
  const started = Date.now()
  const frames = ['|', '/', '-', '\\']
  const tty = process.stdout.isTTY === true
  let frame = 0
  if (!tty) process.stdout.write(`${label} `)
  const timer = setInterval(
    () => {
      const seconds = Math.round((Date.now() - started) / 1000)
      if (tty) process.stdout.write(`\r${frames[frame++ % frames.length]} ${label}... ${seconds}s `)
      else process.stdout.write('.')
    },
    tty ? 120 : 2000,
  )
  return {
    stop(final: string) {
      clearInterval(timer)
      const seconds = ((Date.now() - started) / 1000).toFixed(1)
      process.stdout.write(
        tty ? `\r${label}... ${final} after ${seconds}s\n` : ` ${final} after ${seconds}s\n`,
      )
    },
  }
}
