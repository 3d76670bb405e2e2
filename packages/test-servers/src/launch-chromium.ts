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

/** Options of {@link launchChromium}. */
export interface LaunchChromiumOptions {
  /** The page size. Default 1280 × 800. */
  readonly viewport?: { readonly width: number; readonly height: number };
}

/**
 * Starts Debian's Chromium through playwright-core with an empty temporary user data dir.
 *
 * @param executablePath - The browser, `/usr/bin/chromium`.
 * @param options - {@link LaunchChromiumOptions}.
 */
export async function launchChromium(
  executablePath: string,
  options: LaunchChromiumOptions = {},
): Promise<LaunchedChromium> {
  const profile = mkdtempSync(join(tmpdir(), "lattice-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { ...(options.viewport ?? { width: 1280, height: 800 }) },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
