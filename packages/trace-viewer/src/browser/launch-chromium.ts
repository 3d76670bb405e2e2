import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

/** The flags the browser tests start Chromium with: headless, and no background connections. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** A running Chromium with an empty profile; `close()` stops it and removes the profile. */
export interface LaunchedChromium {
  /** The browser context (one profile). */
  readonly context: BrowserContext;
  /** Stops the browser and deletes its profile directory. */
  close(): Promise<void>;
}

/**
 * Starts Debian's Chromium through playwright-core with an empty temporary user data dir.
 *
 * @param executablePath - The browser, `/usr/bin/chromium`.
 */
export async function launchChromium(executablePath: string): Promise<LaunchedChromium> {
  const profile = mkdtempSync(join(tmpdir(), "lattice-trace-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
