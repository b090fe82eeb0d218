/**
 * Launches the system Chromium (Debian package) through playwright-core.
 * Browser tests never download a browser and never skip: a missing binary is
 * a failure that says how to install it.
 */
import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

/** Where Debian's `chromium` package installs the launcher script. */
export const CHROMIUM_PATH = '/usr/bin/chromium'

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
]

/**
 * Starts headless Chromium, or throws with the install command when it is absent.
 *
 * @example
 * const browser = await launchChromium()
 * const context = await browser.newContext({ viewport: { width: 375, height: 812 } })
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}. Browser tests need the Debian package: ` +
        'run `apt-get update && apt-get install -y chromium` (as root), then re-run the tests.',
    )
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS })
}
