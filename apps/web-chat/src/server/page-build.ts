import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The app's folder. */
export const APP_DIR = fileURLToPath(new URL("../..", import.meta.url));

/** Where `vite build` puts the page. */
export const PAGE_DIR = join(APP_DIR, "dist");

/** The files the page is built from. */
const SOURCES = ["index.html", "vite.config.ts", "src/page"];

/**
 * Whether the built page is missing or older than one of its sources.
 *
 * @param pageDir - The build's folder. Default {@link PAGE_DIR}.
 */
export function pageIsStale(pageDir = PAGE_DIR): boolean {
  const built = join(pageDir, "index.html");
  if (!existsSync(built)) return true;
  const builtAt = statSync(built).mtimeMs;
  return SOURCES.some((source) => newestIn(join(APP_DIR, source)) > builtAt);
}

/**
 * Builds the page with Vite when it is missing or stale (`vite build`, the app's `build`
 * script, quietly).
 *
 * @returns Whether it built.
 */
export async function buildPageIfNeeded(): Promise<boolean> {
  if (!pageIsStale()) return false;
  const { build } = await import("vite");
  await build({ root: APP_DIR, configFile: join(APP_DIR, "vite.config.ts"), logLevel: "warn" });
  return true;
}

function newestIn(path: string): number {
  if (!existsSync(path)) return 0;
  const stats = statSync(path);
  if (!stats.isDirectory()) return stats.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestIn(join(path, entry)));
  return newest;
}
