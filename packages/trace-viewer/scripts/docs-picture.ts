// Refreshes the README's picture, docs/timeline.png: `pnpm --filter @lattice/trace-viewer
// docs:picture`. The tests never write it (H30); run this after a change to the page's look.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CHROMIUM_PATH } from "@lattice/test-servers";
import { saveTimelinePicture } from "../src/fixtures/save-timeline-picture.js";

if (!existsSync(CHROMIUM_PATH)) {
  console.error(
    `docs:picture needs Debian's Chromium at ${CHROMIUM_PATH}: sudo apt-get install -y chromium`,
  );
  process.exit(1);
}
const path = fileURLToPath(new URL("../docs/timeline.png", import.meta.url));
const picture = await saveTimelinePicture({ path, chromiumPath: CHROMIUM_PATH });
if (picture.covered.length > 0) {
  console.error(
    `The details box covers the bars of ${picture.covered.join(", ")}: move the pointer.`,
  );
  process.exit(1);
}
console.log(`Wrote ${path} (${picture.calls} tool calls drawn).`);
