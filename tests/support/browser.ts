import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`, see .ci/run); Playwright never downloads a browser here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Flags for this network and a headless CI box: no GPU, no QUIC, nothing phoning home. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium with a fresh temporary profile (launch() makes one and removes it on close). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/** Where a test run leaves its screenshots for a reviewer (git-ignored). */
export function screenshotDir(suite: string): string {
  const dir = join(process.cwd(), 'test-results', suite);
  mkdirSync(dir, { recursive: true });
  return dir;
}
