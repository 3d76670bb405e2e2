import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { TraceEvent } from "@lattice/core";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { syntheticTrace } from "../bench/synthetic-trace.mjs";
import { type LaunchedChromium, launchChromium } from "./browser/launch-chromium.js";
import { recordQuickstartTrace, recordScenarioTrace } from "./fixtures/record-traces.js";
import { renderTimeline } from "./index.js";

const chromiumPath = inject("chromium");
const docs = join(dirname(fileURLToPath(import.meta.url)), "..", "docs");

interface Box {
  readonly left: number;
  readonly right: number;
}

describe.skipIf(chromiumPath === null)("the timeline in headless Chromium (O7–O12)", () => {
  let browser: LaunchedChromium;
  let folder: string;
  let scenario: TraceEvent[];
  let quickstart: TraceEvent[];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), "lattice-trace-viewer-"));
    [browser, scenario, quickstart] = await Promise.all([
      launchChromium(chromiumPath as string),
      recordScenarioTrace(),
      recordQuickstartTrace(),
    ]);
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    if (folder) rmSync(folder, { recursive: true, force: true });
  });

  async function open(name: string, events: readonly TraceEvent[]): Promise<Page> {
    const file = join(folder, `${name}.html`);
    writeFileSync(file, renderTimeline(events, { title: name }));
    const page = await browser.context.newPage();
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(`${name}: ${message.text()}`);
    });
    page.on("pageerror", (error) => consoleErrors.push(`${name}: ${error.message}`));
    page.on("requestfailed", (request) => consoleErrors.push(`${name}: request ${request.url()}`));
    await page.goto(pathToFileURL(file).href);
    return page;
  }

  const runBox = (page: Page, id: string): Promise<Box> =>
    page.$eval(`[data-call="${id}"] .bar .seg.run`, (element) => {
      const box = element.getBoundingClientRect();
      return { left: box.left, right: box.right };
    });

  it("O7, O11: one bar per tool call and one per model request, from a real agent's trace", async () => {
    const page = await open("scenario", scenario);
    const calls = scenario.filter((event) => event.type === "tool_call_queued").length;
    const models = scenario.filter((event) => event.type === "model_request_started").length;
    expect(calls).toBe(14);
    expect(await page.locator(".bar.call").count()).toBe(calls);
    expect(await page.locator(".bar.model").count()).toBe(models);
    await page.close();
  });

  it("O8, O11: bars overlap exactly where the trace's calls overlapped", async () => {
    const page = await open("overlaps", scenario);
    const times = new Map<string, { start: number; end: number; runId: string }>();
    for (const event of scenario) {
      if (event.type === "tool_call_started") {
        times.set(event.id, { start: event.time, end: event.time, runId: event.runId });
      } else if (event.type === "tool_call_finished") {
        const entry = times.get(event.id);
        if (entry) entry.end = event.time;
      }
    }
    const ids = [...times.keys()];
    let overlapping = 0;
    let apart = 0;
    for (const [i, a] of ids.entries()) {
      for (const b of ids.slice(i + 1)) {
        const ta = times.get(a)!;
        const tb = times.get(b)!;
        const shared = Math.min(ta.end, tb.end) - Math.max(ta.start, tb.start);
        const [ba, bb] = [await runBox(page, a), await runBox(page, b)];
        const drawn = Math.min(ba.right, bb.right) - Math.max(ba.left, bb.left);
        if (shared > 10) {
          overlapping++;
          expect(drawn, `${a} and ${b} ran together`).toBeGreaterThan(3);
        } else if (shared < 0) {
          apart++;
          expect(drawn, `${a} and ${b} did not overlap`).toBeLessThanOrEqual(1);
        }
      }
    }
    // The parallel lookups overlap; the unsafe write overlaps nothing.
    expect(overlapping).toBeGreaterThanOrEqual(4);
    expect(apart).toBeGreaterThan(20);
    const write = await runBox(page, "toolu_w");
    for (const other of ["toolu_a", "toolu_b", "toolu_d", "toolu_e"]) {
      const box = await runBox(page, other);
      expect(Math.min(write.right, box.right) - Math.max(write.left, box.left)).toBeLessThanOrEqual(
        1,
      );
    }
    // The queue wait is a segment of its own, before the running part.
    const wait = await page.$eval(
      '[data-call="toolu_e"] .seg.wait',
      (element) => element.getBoundingClientRect().width,
    );
    expect(wait).toBeGreaterThan(50);
    await page.close();
  });

  it("O8: waits, refusals, denials, timeouts, errors, aborts, retries and child runs are written out", async () => {
    const page = await open("statuses", scenario);
    const text = (id: string) => page.locator(`[data-call="${id}"] .label`).innerText();
    expect(await text("toolu_c")).toContain("✗ failed");
    expect(await text("toolu_d")).toContain("‖ waited");
    expect(await text("toolu_w")).toContain("⚑ unsafe");
    expect(await text("toolu_w1")).toContain("⊗ refused by policy");
    expect(await text("toolu_s")).toContain("◷ timed out");
    expect(await text("toolu_x")).toContain("⊘ denied");
    expect(await text("toolu_r")).toContain("↳ 1 child run");
    const body = await page.locator("main").innerText();
    expect(body).toContain("⊗ batch refused by policy (one_write_per_batch)");
    expect(body).toContain("↻ 1 retry");
    expect(body).toContain("■ aborted");
    const why = async (id: string) => {
      await page.hover(`[data-call="${id}"] .bar`);
      return page.locator('#tip [data-field="why"]').innerText();
    };
    expect(await why("toolu_d")).toBe("waited for a free slot (concurrency cap 3)");
    expect(await why("toolu_e")).toBe("waited for unsafe call write_file (toolu_w)");
    expect(await why("toolu_w")).toBe(
      "unsafe: runs alone; waited for the calls before it: lookup (toolu_a), lookup (toolu_b), flaky (toolu_c), lookup (toolu_d)",
    );
    // The child run comes right after its call, one level deeper.
    const order = await page.$$eval("main .row", (rows) =>
      rows.map(
        (row) =>
          `${row.getAttribute("data-call") ?? (row.classList.contains("run-head") ? "run" : "-")}:${(row as HTMLElement).style.getPropertyValue("--depth") || "0"}`,
      ),
    );
    const at = order.indexOf("toolu_r:0");
    expect(order[at + 1]).toBe("run:1");
    expect(order).toContain("toolu_c1:1");
    await page.close();
  });

  it("O9: hovering a bar shows tool, call id, queued/started/finished, duration and status", async () => {
    const page = await open("hover", scenario);
    await page.hover('[data-call="toolu_a"] .bar');
    const tip = page.locator("#tip");
    await expect.poll(() => tip.isVisible()).toBe(true);
    const fields = await tip
      .locator("dd")
      .evaluateAll((items) =>
        Object.fromEntries(
          items.map((item) => [item.getAttribute("data-field"), item.textContent]),
        ),
      );
    expect(fields).toMatchObject({ tool: "lookup", id: "toolu_a", status: "✓ completed" });
    for (const field of ["queued", "started", "finished", "duration"]) {
      expect(fields[field]).toMatch(/\d/);
    }
    await page.hover('[data-call="toolu_s"] .bar');
    expect(await tip.innerText()).toContain("◷ timed out");
    await page.close();
  });

  it("O9: the keyboard reaches every bar, and focus shows the same details", async () => {
    const page = await open("keyboard", scenario);
    const focused = () =>
      page.evaluate(() => document.activeElement?.getAttribute("data-n") ?? null);
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("0");
    expect(await page.locator("#tip").innerText()).toContain("Model request, turn 1");
    await page.keyboard.press("ArrowDown");
    expect(await focused()).toBe("1");
    await page.keyboard.press("ArrowRight");
    expect(await focused()).toBe("2");
    await page.keyboard.press("ArrowUp");
    expect(await focused()).toBe("1");
    const tip = await page.locator("#tip").innerText();
    expect(tip).toContain("toolu_a");
    expect(tip).toMatch(/Queued[\s\S]*Started[\s\S]*Finished[\s\S]*Duration[\s\S]*Status/);
    await page.keyboard.press("End");
    const total = await page.locator(".bar").count();
    expect(await focused()).toBe(String(total - 1));
    // One tab stop: the focused bar is the only bar in the tab order.
    expect(await page.locator('.bar[tabindex="0"]').count()).toBe(1);
    await page.keyboard.press("Escape");
    expect(await page.locator("#tip").isHidden()).toBe(true);
    await page.close();
  });

  it("O11: a quickstart-like run's timeline, saved as the README's screenshot", async () => {
    const page = await open("Lattice quickstart: tool timeline", quickstart);
    expect(await page.locator(".bar.call").count()).toBe(
      quickstart.filter((event) => event.type === "tool_call_queued").length,
    );
    await page.hover(".row[data-call] .bar");
    mkdirSync(docs, { recursive: true });
    await page.screenshot({ path: join(docs, "timeline.png"), fullPage: true });
    await page.close();
  });

  it("O12: a 10,000-call trace renders, loads and answers the keyboard", async () => {
    const events = syntheticTrace(10_000) as TraceEvent[];
    const before = performance.now();
    const page = await open("ten-thousand", events);
    const elapsed = performance.now() - before;
    expect(await page.locator(".bar.call").count()).toBe(10_000);
    await page.keyboard.press("Tab");
    await page.keyboard.press("End");
    expect(await page.locator("#tip").innerText()).toContain("toolu_500_19");
    // Tab leaves the chart for the link after it, Shift+Tab comes back to the same bar and
    // then reaches the link before it (the page moves the focus: the browser's own search
    // would lay out every row on the way).
    const focusedId = () => page.evaluate(() => document.activeElement?.id ?? "");
    const focusedBar = () =>
      page.evaluate(() => document.activeElement?.getAttribute("data-n") ?? null);
    const last = await focusedBar();
    await page.keyboard.press("Tab");
    expect(await focusedId()).toBe("back");
    await page.keyboard.press("Shift+Tab");
    expect(await focusedBar()).toBe(last);
    await page.keyboard.press("Shift+Tab");
    expect(await focusedId()).toBe("skip");
    await page.keyboard.press("Tab");
    expect(await focusedBar()).toBe(last);
    // The bench measures it (bench/timeline.bench.mjs); this bound is generous on purpose.
    expect(elapsed).toBeLessThan(10_000);
    await page.close();
  }, 30_000);

  it("O11: no console errors, no failed requests on any page", () => {
    expect(consoleErrors).toEqual([]);
  });
});
