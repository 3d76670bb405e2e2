// O12 bench: renders a synthetic 10,000-call trace with renderTimeline, loads it from disk in
// Debian's headless Chromium, and times what a person waits for: the page drawn (load and
// its first frame), the first keyboard focus, arrow-key moves, a hover's tooltip, and frames
// while scrolling through the whole chart.
//
// Run after a build: `npx tsup && node bench/timeline.bench.mjs [calls] [--compare <dist>]`.
// `--compare` loads the pages of another build of this package (its `dist` folder, e.g. a
// copy kept from before a change) too, alternating with this build's page by page, so both
// are measured under the same load.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { parseTraceJsonl } from "../dist/index.js";
import { syntheticTrace } from "./synthetic-trace.mjs";

const args = process.argv.slice(2);
const compareAt = args.indexOf("--compare");
const compareDist = compareAt === -1 ? undefined : resolve(args[compareAt + 1]);
const calls = Number(
  args.find((arg, index) => /^\d+$/.test(arg) && index !== compareAt + 1) ?? 10_000,
);
const renders = 5;
const loads = 5;
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const percentile = (values, p) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];
const time = async (work) => {
  const start = performance.now();
  const value = await work();
  return [performance.now() - start, value];
};

const events = syntheticTrace(calls);
const jsonl = events.map((event) => JSON.stringify(event)).join("\n");
const parseTimes = [];
for (let round = 0; round < renders; round++) {
  parseTimes.push((await time(() => parseTraceJsonl(jsonl)))[0]);
}

const folder = mkdtempSync(join(tmpdir(), "lattice-trace-bench-"));
const builds = [{ name: "this build", dist: resolve(import.meta.dirname, "../dist") }];
if (compareDist !== undefined) builds.push({ name: compareDist, dist: compareDist });
for (const build of builds) {
  const { renderTimeline } = await import(pathToFileURL(join(build.dist, "index.js")).href);
  build.renderTimes = [];
  let html = "";
  for (let round = 0; round < renders; round++) {
    const [elapsed, page] = await time(() => renderTimeline(events));
    build.renderTimes.push(elapsed);
    html = page;
  }
  build.htmlBytes = Buffer.byteLength(html);
  build.file = join(folder, `timeline-${builds.indexOf(build)}.html`);
  writeFileSync(build.file, html);
  Object.assign(build, { loads: [], firstFocus: [], moves: [], hovers: [], frames: [], worst: [] });
}

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
/** One page load of a build: every measure once. */
async function measure(build) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(error.message));
  const [load] = await time(() => page.goto(pathToFileURL(build.file).href, { waitUntil: "load" }));
  // Wait for the first frame after load: the page is drawn.
  const [frame] = await time(() =>
    page.evaluate(
      () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0))),
    ),
  );
  build.loads.push(load + frame);
  build.firstFocus.push((await time(() => page.keyboard.press("Tab")))[0]);
  for (const key of ["ArrowDown", "ArrowDown", "PageDown", "End", "ArrowUp", "Home"]) {
    build.moves.push((await time(() => page.keyboard.press(key)))[0]);
  }
  await page.keyboard.press("Escape");
  // Hover: the pointer onto a bar a few screens down, until its tooltip shows, drawn.
  await page.evaluate(() => window.scrollTo(0, 3000));
  for (const row of [5, 12, 20]) {
    const box = await page.evaluate((index) => {
      const bars = [...document.querySelectorAll(".bar.call")].filter((bar) => {
        const rect = bar.getBoundingClientRect();
        return rect.top > 100 && rect.bottom < window.innerHeight;
      });
      const rect = bars[index]?.getBoundingClientRect();
      return rect && { x: rect.left + Math.min(2, rect.width / 2), y: rect.top + rect.height / 2 };
    }, row);
    if (box === undefined) throw new Error("no bar on screen to hover");
    const [hover] = await time(async () => {
      await page.mouse.move(box.x, box.y);
      await page.evaluate(
        () =>
          new Promise((resolve) => {
            const check = () =>
              document.getElementById("tip").hidden
                ? requestAnimationFrame(check)
                : requestAnimationFrame(() => resolve());
            check();
          }),
      );
    });
    build.hovers.push(hover);
  }
  await page.mouse.move(0, 0);
  // Scrolling: a screen down per frame, through the whole chart; each frame's time.
  const frames = await page.evaluate(async () => {
    window.scrollTo(0, 0);
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const times = [];
    let last = performance.now();
    const end = document.documentElement.scrollHeight - window.innerHeight;
    for (let y = 0; y < end && times.length < 400; ) {
      y += Math.floor(window.innerHeight * 0.9);
      window.scrollTo(0, y);
      await new Promise((resolve) => requestAnimationFrame(resolve));
      const now = performance.now();
      times.push(now - last);
      last = now;
    }
    return times;
  });
  build.frames.push(...frames);
  build.worst.push(Math.max(...frames));
  const bars = await page.locator(".bar.call").count();
  if (bars !== calls) throw new Error(`expected ${calls} bars, found ${bars}`);
  if (errors.length > 0) throw new Error(`page errors: ${errors.join("; ")}`);
  await page.close();
}
try {
  for (const build of builds) await measure(build); // warm-up
  for (let round = 0; round < loads; round++) {
    for (let index = 0; index < builds.length; index++) {
      await measure(builds[(index + round) % builds.length]);
    }
  }
} finally {
  await context.close();
  rmSync(folder, { recursive: true, force: true });
}

const round = (value) => Math.round(value * 10) / 10;
const results = builds.map((build) => {
  const renderMs = median(build.renderTimes);
  const loadMs = median(build.loads);
  return {
    build: build.name,
    calls,
    events: events.length,
    htmlBytes: build.htmlBytes,
    parseJsonlMs: round(median(parseTimes)),
    renderTimelineMs: round(renderMs),
    chromiumLoadMs: round(loadMs),
    renderPlusLoadMs: round(renderMs + loadMs),
    firstKeyboardFocusMs: round(median(build.firstFocus)),
    keyMoveMedianMs: round(median(build.moves)),
    keyMoveMaxMs: round(Math.max(...build.moves)),
    hoverTooltipMedianMs: round(median(build.hovers)),
    scrollFrameMedianMs: round(median(build.frames)),
    scrollFrameP95Ms: round(percentile(build.frames, 0.95)),
    scrollWorstFrameMedianMs: round(median(build.worst)),
  };
});
console.table(results);
console.log(JSON.stringify(results, null, 2));
const [mine] = results;
console.log(
  `O12: ${calls} calls render + load in ${mine.renderPlusLoadMs} ms, median of ${loads} loads (budget 2000 ms): ${mine.renderPlusLoadMs < 2000 ? "within" : "OVER"}; scrolling: median frame ${mine.scrollFrameMedianMs} ms, 95th percentile ${mine.scrollFrameP95Ms} ms`,
);
