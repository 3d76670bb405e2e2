import { existsSync } from "node:fs";
import { aptInstall, withAptLock } from "./provisioning.js";

/** Where Debian's `chromium` package puts the browser. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

const INSTALL_HINT = `Install Debian's Chromium to run the browser tests: sudo apt-get update && sudo apt-get install -y chromium (it must end up at ${CHROMIUM_PATH}).`;

let warned = false;

/**
 * Makes sure Debian's Chromium is at `/usr/bin/chromium`, for browser tests through
 * playwright-core. When it is missing and the tests run as root, installs it
 * (`apt-get install -y chromium`, after an `apt-get update` when the first try fails); test
 * files that call it at once take turns through the package's apt lock, so only one `apt-get`
 * runs. Call it at the top of a browser test file and skip its tests on `null`:
 * `describe.skipIf(chromiumPath === null)`.
 *
 * @returns The browser's path, or `null` when it is missing and `CI` is not `"true"` (a
 *   warning says what to install).
 * @throws Error under `CI=true` when the browser is missing and cannot be installed.
 */
export function ensureChromium(): string | null {
  if (!existsSync(CHROMIUM_PATH) && process.getuid?.() === 0) {
    withAptLock(INSTALL_HINT, () => {
      if (existsSync(CHROMIUM_PATH)) return; // Installed by another test file meanwhile.
      const failure = aptInstall("chromium", CHROMIUM_PATH);
      if (failure !== "") console.error(failure);
    });
  }
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  if (process.env.CI === "true") {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH} and could not be installed. ${INSTALL_HINT}`,
    );
  }
  if (!warned) console.warn(`[test-servers] browser tests skipped: ${INSTALL_HINT}`);
  warned = true;
  return null;
}
