// O12 bench: renders a synthetic 10,000-call trace with renderTimeline, loads it from disk in
// Debian's headless Chromium, and times the first keyboard focus and later arrow-key moves.
// Run after a build: `npx tsup && node bench/timeline.bench.mjs [calls]`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { parseTraceJsonl, renderTimeline } from "../dist/index.js";
import { syntheticTrace } from "./synthetic-trace.mjs";

const calls = Number(process.argv[2] ?? 10_000);
const repeats = 5;
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const time = async (work) => {
  const start = performance.now();
  const value = await work();
  return [performance.now() - start, value];
};

const events = syntheticTrace(calls);
const jsonl = events.map((event) => JSON.stringify(event)).join("\n");
const parseTimes = [];
const renderTimes = [];
let html = "";
for (let round = 0; round < repeats; round++) {
  parseTimes.push((await time(() => parseTraceJsonl(jsonl)))[0]);
  const [elapsed, page] = await time(() => renderTimeline(events));
  renderTimes.push(elapsed);
  html = page;
}

const folder = mkdtempSync(join(tmpdir(), "lattice-trace-bench-"));
const file = join(folder, "timeline.html");
writeFileSync(file, html);
const context = await chromium.launchPersistentContext(join(folder, "profile"), {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
  viewport: { width: 1280, height: 800 },
});
const loads = [];
const firstFocus = [];
const moves = [];
try {
  for (let round = 0; round < 3; round++) {
    const page = await context.newPage();
    const [load] = await time(() => page.goto(pathToFileURL(file).href, { waitUntil: "load" }));
    // Wait for the first frame after load: the page is drawn.
    const [frame] = await time(() =>
      page.evaluate(
        () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))),
      ),
    );
    loads.push(load + frame);
    firstFocus.push((await time(() => page.keyboard.press("Tab")))[0]);
    for (const key of ["ArrowDown", "ArrowDown", "End", "ArrowUp", "Home"]) {
      moves.push((await time(() => page.keyboard.press(key)))[0]);
    }
    const bars = await page.locator(".bar.call").count();
    if (bars !== calls) throw new Error(`expected ${calls} bars, found ${bars}`);
    await page.close();
  }
} finally {
  await context.close();
  rmSync(folder, { recursive: true, force: true });
}

const round = (value) => Math.round(value);
const result = {
  calls,
  events: events.length,
  htmlBytes: Buffer.byteLength(html),
  parseJsonlMs: round(median(parseTimes)),
  renderTimelineMs: round(median(renderTimes)),
  chromiumLoadMs: round(median(loads)),
  renderPlusLoadMs: round(median(renderTimes) + median(loads)),
  firstKeyboardFocusMs: round(median(firstFocus)),
  keyMoveMedianMs: round(median(moves)),
  keyMoveMaxMs: round(Math.max(...moves)),
};
console.log(JSON.stringify(result, null, 2));
console.log(
  `O12: ${calls} calls render + load in ${result.renderPlusLoadMs} ms (budget 2000 ms): ${result.renderPlusLoadMs < 2000 ? "within" : "OVER"}`,
);
