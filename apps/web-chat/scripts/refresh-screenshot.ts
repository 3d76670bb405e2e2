// Refreshes the README's picture, docs/web-chat.png:
// `npx -y pnpm@12.4.2 --filter @lattice-apps/web-chat screenshot`. The tests never write it
// (H30): they take their pictures in a temp folder. Run this after a change to the page's look.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureChromium, launchChromium } from "@lattice/test-servers";
import { playPictureChat } from "../src/fixtures/chat-page.js";
import { buildPageIfNeeded, PAGE_DIR } from "../src/server/page-build.js";
import { startWebChatServer } from "../src/server/web-chat-server.js";

const chromiumPath = ensureChromium();
if (chromiumPath === null) process.exit(1);
await buildPageIfNeeded();
const dataDir = mkdtempSync(join(tmpdir(), "lattice-web-chat-picture-"));
const server = await startWebChatServer({ port: 0, dataDir, pageDir: PAGE_DIR, env: {} });
const browser = await launchChromium(chromiumPath, { viewport: { width: 1000, height: 900 } });
try {
  const page = await browser.context.newPage();
  await page.goto(`${server.url}/?chat=readme-picture`);
  await playPictureChat(page);
  const path = fileURLToPath(new URL("../docs/web-chat.png", import.meta.url));
  await page.screenshot({ path, fullPage: true });
  console.log(`Wrote ${path}.`);
} finally {
  await browser.close();
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}
