import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { BrowserContext } from 'playwright-core';

/**
 * Debian's chromium headless shell (deploy/local/chromium.sh installs it, and says why not the
 * full browser); TRELLIS_CHROMIUM names another binary.
 */
export const CHROMIUM = process.env.TRELLIS_CHROMIUM ?? '/usr/bin/chromium-headless-shell';

/**
 * Flags that let headless chromium run on a machine without a GPU, a sandbox or an open
 * network: without the network ones its background connections are refused in bulk.
 */
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Headless chromium driven by playwright-core, with a fresh profile. Throws (so the test fails,
 * never skips) when the binary is missing or does not start.
 */
export async function launchBrowser(viewport = { width: 1280, height: 800 }): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`no browser at ${CHROMIUM}: run deploy/local/chromium.sh install (apt-get install chromium-headless-shell), or set TRELLIS_CHROMIUM`);
  const profile = mkdtempSync(join(tmpdir(), 'trellis-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: FLAGS, viewport, timeout: 60_000 });
    return {
      context,
      close: async () => {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw new Error(`chromium at ${CHROMIUM} did not start: ${(error as Error).message}`);
  }
}
