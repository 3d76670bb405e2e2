import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { TestProject } from "vitest/node";

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

declare module "vitest" {
  export interface ProvidedContext {
    /** The Chromium executable, or `null` when it is missing and could not be installed. */
    chromium: string | null;
  }
}

const INSTALL_HINT = `Install Debian's Chromium to run the trace viewer's browser tests: sudo apt-get update && sudo apt-get install -y chromium (it must end up at ${CHROMIUM_PATH}).`;

/**
 * Vitest global setup: makes sure Debian's Chromium is at `/usr/bin/chromium`. When it is
 * missing and the tests run as root, installs it with `apt-get install -y chromium` (after an
 * `apt-get update` when the first try fails). When it is still missing, fails the run under
 * `CI=true` and otherwise prints what to install and lets the browser tests skip.
 *
 * @throws Error under `CI=true` when the browser is missing and cannot be installed.
 */
export default function ensureChromium(project: TestProject): void {
  if (!existsSync(CHROMIUM_PATH) && process.getuid?.() === 0) {
    const install = () =>
      execFileSync("apt-get", ["install", "-y", "chromium"], {
        stdio: "inherit",
        env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      });
    try {
      install();
    } catch {
      try {
        execFileSync("apt-get", ["update"], { stdio: "inherit" });
        install();
      } catch {
        // Reported below.
      }
    }
  }
  if (existsSync(CHROMIUM_PATH)) {
    project.provide("chromium", CHROMIUM_PATH);
    return;
  }
  if (process.env.CI === "true") {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH} and could not be installed. ${INSTALL_HINT}`,
    );
  }
  console.warn(`[trace-viewer] browser tests skipped: ${INSTALL_HINT}`);
  project.provide("chromium", null);
}
