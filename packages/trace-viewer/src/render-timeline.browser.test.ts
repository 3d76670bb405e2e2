import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { TraceEvent } from "@lattice/core";
import { ensureChromium, type LaunchedChromium, launchChromium } from "@lattice/test-servers";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { syntheticTrace } from "../bench/synthetic-trace.mjs";
import { HOSTILE_MARKUP, hostileTrace } from "./fixtures/hostile-trace.js";
import { changedFiles, snapshotPackageTree } from "./fixtures/package-tree-guard.js";
import { recordQuickstartTrace, recordScenarioTrace } from "./fixtures/record-traces.js";
import { sampleTrace } from "./fixtures/sample-trace.js";
import { saveTimelinePicture } from "./fixtures/save-timeline-picture.js";
import { chainTrace } from "./fixtures/stress-traces.js";
import { renderTimeline } from "./index.js";
import { runTraceCli } from "./run-trace-cli.js";

// Installs Debian's Chromium when it is missing (as root), or says what to install.
const chromiumPath = ensureChromium();

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

  it("O11: a quickstart-like run's timeline, drawn with every call", async () => {
    const page = await open("Lattice quickstart: tool timeline", quickstart);
    expect(await page.locator(".bar.call").count()).toBe(
      quickstart.filter((event) => event.type === "tool_call_queued").length,
    );
    await page.close();
  });

  it("H30, O11: the README's picture is saved where it is told, changes no file of the package, and its details cover no bar", async () => {
    const before = snapshotPackageTree();
    const path = join(folder, "timeline.png");
    const picture = await saveTimelinePicture({ path, chromiumPath: chromiumPath as string });
    expect(changedFiles(before, snapshotPackageTree())).toEqual([]);
    expect(picture.calls).toBe(9);
    // The tooltip sits beside the bars the picture is meant to show, not over them.
    expect(picture.covered).toEqual([]);
    // A PNG of a whole page, not an empty one.
    expect(readFileSync(path).subarray(1, 4).toString()).toBe("PNG");
    expect(statSync(path).size).toBeGreaterThan(20_000);
  }, 30_000);

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
    // Z on a call zooms into its batch (the last turn's 20 calls) and back.
    const shown = () =>
      page.$$eval(
        ".bar",
        (bars) => bars.filter((bar) => (bar as HTMLElement).offsetParent !== null).length,
      );
    await page.keyboard.press("z");
    expect(await shown()).toBe(20);
    await page.keyboard.press("z");
    expect(await page.locator("main.zoomed").count()).toBe(0);
    // The bench measures it (bench/timeline.bench.mjs); this bound is generous on purpose.
    expect(elapsed).toBeLessThan(10_000);
    await page.close();
  }, 30_000);

  it("H15: markup from a trace never runs: the page shows it as text, and its policy blocks inline handlers", async () => {
    const markup = HOSTILE_MARKUP;
    const hostile = hostileTrace();
    // Through renderTimeline, and through lattice-trace timeline.
    const viaApi = join(folder, "hostile-api.html");
    writeFileSync(viaApi, renderTimeline(hostile, { title: markup }));
    const trace = join(folder, "hostile-cli.jsonl");
    writeFileSync(trace, `${hostile.map((event) => JSON.stringify(event)).join("\n")}\n`);
    const quiet = { out: () => undefined, error: () => undefined };
    expect(
      await runTraceCli(["timeline", trace, "-o", join(folder, "hostile-cli.html")], quiet),
    ).toBe(0);
    for (const file of [viaApi, join(folder, "hostile-cli.html")]) {
      // Not through open(): the policy's refusals below are console errors on purpose.
      const page = await browser.context.newPage();
      await page.goto(pathToFileURL(file).href);
      expect(await page.locator("main").innerText()).toContain(markup);
      expect(await page.locator(".bar.call").count()).toBe(7);
      // An escaping slip would meet the policy: a handler put into the page does not run.
      const violations = await page.evaluate(
        () =>
          new Promise<string[]>((resolve) => {
            const seen: string[] = [];
            document.addEventListener("securitypolicyviolation", (event) =>
              seen.push(event.effectiveDirective),
            );
            document.body.insertAdjacentHTML(
              "beforeend",
              '<img src="x" onerror="window.__h15=2"><svg onload="window.__h15=3"></svg>',
            );
            setTimeout(() => resolve(seen), 300);
          }),
      );
      expect(await page.evaluate(() => (window as { __h15?: number }).__h15)).toBeUndefined();
      expect(violations).toContain("script-src-attr");
      await page.close();
    }
  });

  it("O8: every bar is wide enough to see, and calls that ran one after another are drawn one after another", async () => {
    for (const width of [1280, 800]) {
      const page = await open(`sub-millisecond-${width}`, sampleTrace());
      await page.setViewportSize({ width, height: 800 });
      const box = (selector: string) =>
        page.$eval(selector, (element) => {
          const rect = element.getBoundingClientRect();
          return { left: rect.left, right: rect.right, width: rect.width };
        });
      const widths = await page.$$eval(".bar", (bars) =>
        bars.map((bar) => bar.getBoundingClientRect().width),
      );
      expect(Math.min(...widths), `narrowest bar at ${width} px`).toBeGreaterThanOrEqual(4);
      // Edit → Edit → Write, under a millisecond each, one after another.
      const runs = [];
      for (const id of ["toolu_edit_1", "toolu_edit_2", "toolu_write"]) {
        runs.push(await box(`[data-call="${id}"] .seg.run`));
      }
      for (const [index, run] of runs.entries()) {
        expect(run.width, `run ${index} at ${width} px`).toBeGreaterThanOrEqual(4);
        if (index > 0)
          expect(run.left, `run ${index} at ${width} px`).toBeGreaterThanOrEqual(
            runs[index - 1]!.right - 0.5,
          );
      }
      // Bash then Read: the read is drawn after the bash, though both were queued together.
      const bash = await box('[data-call="toolu_bash"] .seg.run');
      const read = await box('[data-call="toolu_read"] .seg.run');
      expect(read.left).toBeGreaterThanOrEqual(bash.right - 0.5);
      // Refused calls are marks of a visible size.
      expect((await box('[data-call="toolu_write_a"] .bar')).width).toBeGreaterThanOrEqual(9);
      // Every icon next to a bar is on the page, not cut at its right edge.
      const iconRight = await page.$$eval(".bar > i", (icons) =>
        Math.max(...icons.map((icon) => icon.getBoundingClientRect().right)),
      );
      expect(iconRight).toBeLessThanOrEqual(width - 2);
      // The details keep the true times.
      await page.hover('[data-call="toolu_edit_2"] .bar');
      const field = (name: string) => page.locator(`#tip [data-field="${name}"]`).innerText();
      expect(await field("started")).toBe("+3000.40 ms");
      expect(await field("finished")).toBe("+3000.70 ms");
      expect(await field("duration")).toBe("0.30 ms");
      await page.close();
    }
  });

  it("O8: labels are shown whole: nothing is cut, long ones wrap, and the label column can be resized", async () => {
    for (const width of [1280, 800]) {
      const page = await open(`labels-${width}`, scenario);
      await page.setViewportSize({ width, height: 800 });
      const cut = await page.$$eval("main .label", (labels) =>
        labels
          .filter(
            (label) =>
              label.scrollWidth > label.clientWidth + 1 ||
              getComputedStyle(label).textOverflow === "ellipsis",
          )
          .map((label) => label.textContent),
      );
      expect(cut, `at ${width} px`).toEqual([]);
      expect(await page.locator("main").innerText()).toContain("⊗ refused by policy");
      const plan = await page.locator(".batch-head .label").first().innerText();
      // The plan, whole, then the button that zooms into the batch's calls.
      expect(plan).toMatch(
        /^plan \(safe, cap 3\): \[lookup ‖ lookup ‖ flaky ‖ lookup\] → \[write_file\] → \[lookup\]\s*⤢ zoom calls$/,
      );
      await page.close();
    }
    const page = await open("resize", scenario);
    const labelWidth = () =>
      page.$eval('[data-call="toolu_a"] .label', (label) => label.getBoundingClientRect().width);
    const before = await labelWidth();
    await page.focus("#label-width");
    for (let step = 0; step < 5; step++) await page.keyboard.press("ArrowRight");
    expect(await labelWidth()).toBeCloseTo(before + 100, -1);
    await page.close();
  });

  it("O9: each turn zooms in and out, by its button or by Z from the keyboard", async () => {
    const page = await open("zoom", sampleTrace());
    const visibleRows = () =>
      page.$$eval(
        "main .row",
        (rows) => rows.filter((row) => (row as HTMLElement).offsetParent !== null).length,
      );
    const widthOf = (selector: string) =>
      page.$eval(selector, (element) => element.getBoundingClientRect().width);
    const styleOf = (selector: string) =>
      page.$eval(selector, (element) => element.getAttribute("style"));
    const allRows = await visibleRows();
    const bashWide = await widthOf('[data-call="toolu_bash"] .bar');
    const readStyle = await styleOf('[data-call="toolu_read"] .bar');
    const focused = () =>
      page.evaluate(
        () => document.activeElement?.getAttribute("data-n") ?? document.activeElement?.id ?? null,
      );
    // Turn 3 by its button: its model request, plan and two calls, on the turn's own time; the
    // focus goes to the "whole trace" button.
    await page.locator(".row.turn-head", { hasText: "turn 3" }).locator(".zoom").click();
    expect(await focused()).toBe("unzoom");
    expect(await visibleRows()).toBe(4);
    expect(await page.locator("#zoombar").isVisible()).toBe(true);
    expect(await page.locator("#zoomtitle").innerText()).toContain("turn 3");
    expect(await widthOf('[data-call="toolu_bash"] .bar')).toBeGreaterThan(bashWide * 3);
    const ticks = await page.locator(".axis .tick").allInnerTexts();
    expect(ticks[0]).toBe("0 ms");
    // Back, with the whole trace as it was.
    await page.click("#unzoom");
    expect(await visibleRows()).toBe(allRows);
    expect(await styleOf('[data-call="toolu_read"] .bar')).toBe(readStyle);
    // The focus moves on to the turn's first bar, in the whole trace.
    expect(await focused()).toBe("7");
    // From the keyboard: Z on a bar zooms into its turn; the arrows stay in the turn.
    await page.keyboard.press("Home");
    expect(await focused()).toBe("0");
    await page.keyboard.press("z");
    expect(await visibleRows()).toBe(5);
    await page.keyboard.press("End");
    expect(await focused()).toBe("3");
    await page.keyboard.press("ArrowDown");
    expect(await focused()).toBe("3");
    // The "whole trace" button is in the tab order while zoomed, right before the chart.
    await page.keyboard.press("Shift+Tab");
    expect(await focused()).toBe("unzoom");
    await page.keyboard.press("Tab");
    expect(await focused()).toBe("3");
    await page.keyboard.press("Z");
    expect(await visibleRows()).toBe(allRows);
    expect(await page.locator("#zoombar").isHidden()).toBe(true);
    expect(await page.locator("#zoomstatus").innerText()).toBe("Showing the whole trace.");
    await page.close();
  });

  /** The axis of the page as drawn: the time (ms since the axis' origin) at the track's right edge. */
  const axisEnd = (page: Page) =>
    page.$$eval(".axis .tick", (ticks) => {
      const parsed = ticks.map((tick) => {
        const text = tick.textContent ?? "";
        const value = Number.parseFloat(text) * (text.endsWith(" s") ? 1000 : 1);
        return [Number.parseFloat((tick as HTMLElement).style.left), value] as const;
      });
      const [[p0, t0], [p1, t1]] = [parsed[0]!, parsed[1]!];
      return t0 + ((100 - p0) * (t1 - t0)) / (p1 - p0);
    });

  it("O8: a long chain of sub-millisecond calls after a long model request is drawn truthfully: the axis ends near the trace's end, no bar runs past the track, and only real waits are hatched", async () => {
    const events = chainTrace(120);
    for (const width of [1280, 800]) {
      const page = await open(`chain-${width}`, events);
      await page.setViewportSize({ width, height: 800 });
      expect(await axisEnd(page), `axis end at ${width} px`).toBeLessThanOrEqual(10_100 * 1.1);
      const drawn = await page.$$eval("main .row[data-call]", (rows) =>
        rows.map((row) => {
          const track = row.querySelector(".track")!.getBoundingClientRect();
          const bar = row.querySelector(".bar")!.getBoundingClientRect();
          const wait = row.querySelector(".seg.wait")?.getBoundingClientRect().width ?? 0;
          return {
            id: row.getAttribute("data-call")!,
            track: track.width,
            right: bar.right - track.right,
            wait,
          };
        }),
      );
      expect(drawn).toHaveLength(120);
      for (const row of drawn) {
        const index = Number(row.id.slice(1));
        // Call i waited 0.5 × i ms in the queue: its hatch is at most that wide (plus a pixel).
        const trueWait = ((index * 0.5) / 10_100) * row.track;
        expect(row.wait, `${row.id}'s hatch at ${width} px`).toBeLessThanOrEqual(trueWait + 1);
        expect(row.right, `${row.id}'s right edge at ${width} px`).toBeLessThanOrEqual(1);
      }
      await page.close();
    }
  });

  it("O9: Z on a call zooms into its batch, where a chain of sub-millisecond calls can be read", async () => {
    const page = await open("chain-zoom", chainTrace(120));
    await page.keyboard.press("Tab");
    await page.keyboard.press("End");
    await page.keyboard.press("z");
    const shown = await page.$$eval(".bar", (bars) =>
      bars
        .filter((bar) => (bar as HTMLElement).offsetParent !== null)
        .map((bar) => {
          const run = bar.querySelector(".seg.run")!.getBoundingClientRect();
          const track = bar.parentElement!.getBoundingClientRect();
          return {
            left: run.left,
            right: run.right,
            width: run.width,
            past: run.right - track.right,
          };
        }),
    );
    expect(shown).toHaveLength(120);
    expect(await page.locator("#zoomtitle").innerText()).toMatch(/calls of turn 1/);
    // The axis spans the calls' 60 ms, not the turn's 10 s.
    expect(await axisEnd(page)).toBeLessThanOrEqual(60 * 1.15);
    for (const [index, bar] of shown.entries()) {
      expect(bar.width, `call ${index}`).toBeGreaterThanOrEqual(2);
      expect(bar.past, `call ${index}`).toBeLessThanOrEqual(1);
      if (index > 0)
        expect(bar.left, `call ${index}`).toBeGreaterThanOrEqual(shown[index - 1]!.right - 0.5);
    }
    await page.close();
  });

  it("O9: Z keeps the focused bar in view, with its details beside it", async () => {
    const page = await open("zoom-focus", chainTrace(120));
    await page.setViewportSize({ width: 1280, height: 600 });
    await page.keyboard.press("Tab");
    await page.keyboard.press("End");
    const seen = () =>
      page.evaluate(() => {
        const bar = document.activeElement!.getBoundingClientRect();
        const axis = document.querySelector(".axis")!.getBoundingClientRect();
        const tip = document.getElementById("tip")!;
        const box = tip.getBoundingClientRect();
        return {
          n: document.activeElement!.getAttribute("data-n"),
          inView: bar.top >= axis.bottom - 1 && bar.bottom <= window.innerHeight,
          tipShown: !tip.hidden,
          // The details right under the bar, or right above it.
          beside: Math.abs(box.top - bar.bottom - 6) < 2 || Math.abs(bar.top - box.bottom - 6) < 2,
        };
      });
    for (const key of ["z", "z"]) {
      await page.keyboard.press(key);
      await expect
        .poll(seen, { timeout: 2_000 })
        .toEqual({ n: "120", inView: true, tipShown: true, beside: true });
    }
    // From a turn's button the focus goes to "Whole trace", at the top of the page.
    await page.locator(".row.turn-head .zoom").click();
    expect(await page.evaluate(() => [document.activeElement?.id, window.scrollY])).toEqual([
      "unzoom",
      0,
    ]);
    await page.close();
  });

  it("O8: the axis lines up with the bars and nothing is clipped, after moving the label slider at 800 px and in a 640 px window", async () => {
    for (const [width, steps] of [
      [800, 0],
      [800, 3],
      [800, 20],
      [640, 0],
    ] as const) {
      const page = await open(`align-${width}-${steps}`, scenario);
      await page.setViewportSize({ width, height: 700 });
      const column = () =>
        page.$eval("main .row .label", (label) => label.getBoundingClientRect().width);
      // The slider starts at the column's real width (after the page's resize handler ran: the
      // resize event comes after setViewportSize resolves).
      const slider = () =>
        page.$eval("#label-width", (input) => Number((input as HTMLInputElement).value));
      await expect
        .poll(async () => Math.abs((await slider()) - (await column())), { timeout: 2_000 })
        .toBeLessThan(5);
      await page.focus("#label-width");
      for (let step = 0; step < steps; step++) await page.keyboard.press("ArrowRight");
      if (steps > 0) expect(await column()).toBeGreaterThan(200);
      const seen = await page.evaluate(() => {
        const ticks = document.querySelector(".axis .ticks")!.getBoundingClientRect();
        const row = document.querySelector('[data-call="toolu_e"]')!;
        const track = row.querySelector(".track")!.getBoundingClientRect();
        const chunk = row.closest(".chunk")!.getBoundingClientRect();
        const icons = Array.from(document.querySelectorAll(".bar > i")).map(
          (icon) => icon.getBoundingClientRect().right,
        );
        return {
          ticksLeft: ticks.left,
          ticksWidth: ticks.width,
          trackLeft: track.left,
          trackWidth: track.width,
          chunkRight: chunk.right,
          iconRight: Math.max(...icons),
          scrollWidth: document.documentElement.scrollWidth,
        };
      });
      const context = `${width} px, ${steps} steps: ${JSON.stringify(seen)}`;
      expect(Math.abs(seen.ticksLeft - seen.trackLeft), context).toBeLessThanOrEqual(1);
      expect(Math.abs(seen.ticksWidth - seen.trackWidth), context).toBeLessThanOrEqual(1);
      expect(seen.trackWidth, context).toBeGreaterThanOrEqual(479);
      // Nothing is cut at the right: the rows' chunk holds the track and the icons after it.
      expect(seen.chunkRight, context).toBeGreaterThanOrEqual(seen.iconRight);
      expect(seen.scrollWidth, context).toBeGreaterThanOrEqual(seen.iconRight);
      await page.close();
    }
  });

  it("O11: no console errors, no failed requests on any page", () => {
    expect(consoleErrors).toEqual([]);
  });
});
