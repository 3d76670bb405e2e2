import type { TraceEvent } from "@lattice/core";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import {
  buildTimeline,
  type TimelineBatch,
  type TimelineCall,
  type TimelineModelCall,
  type TimelineRun,
} from "./build-timeline.js";
import { layoutBars } from "./layout-bars.js";
import { ROW_PX, TIMELINE_CSS, TIMELINE_SCRIPT, timelineScriptHash } from "./timeline-assets.js";
import { type TimelineRow, timelineRows, type ZoomBlock } from "./timeline-rows.js";
import {
  escapeHtml,
  formatDuration,
  formatOffset,
  jsonForScript,
  pct,
  STATUS_TEXT,
  shorten,
} from "./timeline-text.js";
import { at, axisTicks, callGeometry, modelGeometry, type View } from "./timeline-view.js";
import { zoomViews } from "./zoom-views.js";

/** Options of {@link renderTimeline}. */
export interface RenderTimelineOptions {
  /** The page title and heading. Default: `"Lattice tool timeline"`. */
  readonly title?: string | undefined;
  /**
   * Notes shown above the chart, as text: for example that the trace's last line was cut and
   * dropped. Default: none.
   */
  readonly notes?: readonly string[] | undefined;
}

const OPTION_KEYS: ReadonlySet<string> = new Set(["title", "notes"]);

/**
 * How many levels of nesting the labels are indented by (12 px each). Runs nested deeper are
 * drawn at this indentation, and their headers say their level.
 */
export const MAX_DRAWN_DEPTH = 6;

/** Checks the options' keys and their types. */
function checkOptions(options: RenderTimelineOptions): void {
  assertKnownOptions(options, OPTION_KEYS, "renderTimeline():");
  const { title, notes } = options;
  if (title !== undefined && typeof title !== "string") {
    throw new InvalidOptionError(
      "renderTimeline():",
      "title",
      `must be a string, received ${describeValue(title)}. Pass the page's title as text, or leave it out.`,
    );
  }
  if (
    notes !== undefined &&
    (!Array.isArray(notes) || notes.some((note: unknown) => typeof note !== "string"))
  ) {
    throw new InvalidOptionError(
      "renderTimeline():",
      "notes",
      `must be an array of strings, received ${describeValue(notes)}. Pass each note as a string in an array, or leave it out.`,
    );
  }
}

/**
 * Renders a run's trace as one self-contained HTML page (inline style and script, no network
 * access, opens from disk): one row per tool call grouped by run and turn, model requests as
 * their own bars, time on the x axis. A call's queue wait (hatched) is drawn apart from its
 * running time (solid); the plan's reasons for waiting (a concurrency cap, an unsafe call),
 * policy refusals, denials, timeouts, errors, aborts and retries are written on the rows as
 * icons and words, and agent tools' child runs are nested under their call. Hovering or
 * focusing a bar shows its details; the arrow keys move between bars; each turn, or its calls
 * alone, can be zoomed into. Every bar is at least 0.9 % of the track wide, and calls of a batch
 * that ran one after another are drawn one after another (a dotted stretch, not a wait), so a
 * sub-millisecond call can be drawn longer or later than it ran, by at most 5 % of the track
 * (the minimum width shrinks for a longer chain); its details give its true times. The axis ends
 * near the trace's end, and no bar is drawn past it.
 *
 * Every value from the trace reaches the page as text: it is escaped, and the page's
 * Content-Security-Policy runs no script but the page's own (by its sha256 hash) and no inline
 * event handler. The page's size grows with the trace only, whatever its shape (repeated plan
 * indices, runs nested thousands deep), and it is built without recursion.
 *
 * @param events - Trace events, from `onTrace` or {@link parseTraceJsonl}, in emitted order.
 * @param options - {@link RenderTimelineOptions}.
 * @returns The HTML document as a string.
 * @throws {@link TraceEventError} for an event the page cannot be drawn from (see {@link buildTimeline}).
 * @throws `InvalidOptionError` for options that are not an object, a `title` that is not a
 *   string or `notes` that are not an array of strings; `UnknownOptionError` for unknown keys.
 */
export function renderTimeline(
  events: Iterable<TraceEvent>,
  options: RenderTimelineOptions = {},
): string {
  checkOptions(options);
  const timeline = buildTimeline(events);
  const title = options.title ?? "Lattice tool timeline";
  const { rows, bars, blocks, maxDepth } = timelineRows(timeline);
  const full = layoutBars(bars, {
    from: timeline.start,
    to: Math.max(timeline.end, timeline.start + 1),
  });
  const view: View = { window: full.window, boxes: full.boxes, origin: timeline.start };
  const buttonAt = new Map(blocks.map((block, index) => [block.buttonRow, index]));
  const tips: Record<string, string>[] = new Array(bars.length);
  const html: string[] = [];
  let labelChars = 0;
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index]!;
    const zoom = buttonAt.get(index);
    const drawn = renderRow(row, view, tips, zoom === undefined ? undefined : blocks[zoom]!, zoom);
    if (drawn.labelChars > labelChars) labelChars = drawn.labelChars;
    html.push(drawn.html);
  }
  const statusCounts = countStatuses(rows);
  const summary = [
    `${timeline.callCount} tool call${timeline.callCount === 1 ? "" : "s"}`,
    `${timeline.modelCallCount} model request${timeline.modelCallCount === 1 ? "" : "s"}`,
    `${formatDuration(timeline.end - timeline.start)} in all`,
    ...statusCounts,
  ].join(" · ");
  const axis = axisTicks(full.window, timeline.start);
  // Wide enough for the longest label (about 7 px a character), within reason; it wraps beyond.
  const labelPx = Math.round(Math.min(560, Math.max(280, labelChars * 7 + 40)) / 10) * 10;
  const allNotes = [...(options.notes ?? [])];
  if (maxDepth > MAX_DRAWN_DEPTH) {
    allNotes.push(
      `Runs are nested up to ${maxDepth} levels deep: those below level ${MAX_DRAWN_DEPTH} are indented no further, and their headers say their level.`,
    );
  }
  const notes = allNotes
    .map((note) => `<p class="note" role="note">⚠ ${escapeHtml(note)}</p>`)
    .join("\n");
  return `<!doctype html>
<html lang="en" style="--label:max(160px,min(${labelPx}px,45vw,calc(100vw - 600px)))"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src '${timelineScriptHash()}'; base-uri 'none'; form-action 'none'">
<title>${escapeHtml(title)}</title>
<style>${TIMELINE_CSS}</style></head>
<body>
<header id="top">
<h1>${escapeHtml(title)}</h1>
<p class="summary" data-calls="${timeline.callCount}">${escapeHtml(summary)}</p>
${notes}
<ul class="legend" aria-label="Legend">
<li><span class="swatch wait"></span>waiting in the queue</li>
<li><span class="swatch run"></span>running</li>
<li><span class="swatch model-swatch"></span>model request (↻ retry)</li>
<li><span class="swatch late"></span>settled after its deadline</li>
<li><span class="swatch moved"></span>drawn later than it ran, to keep its batch's order (not a wait)</li>
<li>✓ completed · ✗ failed · ◷ timed out · ⊗ refused by policy · ⊘ denied · ■ cancelled / aborted · ⚠ invalid input · ‖ waited (cap or unsafe call) · ⚑ unsafe, runs alone · ✎ approval</li>
</ul>
<p class="help">Hover a bar, or focus one (Tab into the chart, then ↑ ↓ ← → Home End PgUp PgDn), for its exact times and status; Esc hides the details. Z on a call shows its batch's calls alone on their own time scale, Z on a model request its whole turn (a turn's ⤢ zoom and ⤢ zoom calls buttons do the same); Z again, the whole trace. Bars are at least a few pixels wide and calls that ran one after another are drawn in that order, so a very short call can look longer or later than it was: its details give the true times. <label class="width">Label column <input id="label-width" type="range" min="160" max="900" step="1" value="${labelPx}" aria-label="Width of the label column, in pixels"></label> <a id="skip" href="#end">Skip past the chart</a></p>
</header>
<div class="axis"><div class="label" aria-hidden="true">run / turn / call<span class="grip" title="Drag to resize the label column"></span></div><div class="ticks" aria-hidden="true">${axis.html}</div>
<div id="zoombar" hidden><span id="zoomtitle"></span> <button id="unzoom" type="button">⤺ Whole trace (Z)</button></div></div>
<p id="zoomstatus" class="sr" aria-live="polite"></p>
<main aria-label="Tool calls by run and turn" style="--grid:${axis.grid}%">
${chunked(html)}
</main>
<footer id="end"><a id="back" href="#top">↑ Back to the top</a></footer>
<div id="tip" role="tooltip" hidden></div>
<script type="application/json" id="tips">${jsonForScript(tips)}</script>
<script type="application/json" id="zoom">${jsonForScript(zoomViews(blocks, bars, rows, timeline.start))}</script>
<script>${TIMELINE_SCRIPT}</script>
</body></html>
`;
}

/** Rows per chunk: the unit the browser skips while it is off screen. */
const CHUNK_ROWS = 64;

/**
 * The rows in chunks of {@link CHUNK_ROWS}, each `content-visibility: auto` with its height
 * as its intrinsic size (exact unless a long label wraps): the browser lays out and paints the
 * chunks near the screen only, and the page keeps its full height, so the scroll bar,
 * scrolling, find-in-page, focus and the accessibility tree see every row. This is what keeps
 * a 10,000-call trace fast (O12).
 */
function chunked(rows: readonly string[]): string {
  const out: string[] = [];
  for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
    const end = Math.min(start + CHUNK_ROWS, rows.length);
    out.push(`<div class="chunk" style="contain-intrinsic-size:auto ${(end - start) * ROW_PX}px">`);
    for (let index = start; index < end; index++) out.push(rows[index]!);
    out.push("</div>");
  }
  return out.join("\n");
}

/** A drawn row's HTML, and the length of its label's text (to size the label column). */
interface DrawnRow {
  readonly html: string;
  readonly labelChars: number;
}

function renderRow(
  row: TimelineRow,
  view: View,
  tips: Record<string, string>[],
  block: ZoomBlock | undefined,
  blockIndex: number | undefined,
): DrawnRow {
  const zoom = block === undefined ? "" : zoomButton(block, blockIndex!);
  // Deeper runs keep this indentation: their headers say their level.
  const depth = Math.min(row.depth, MAX_DRAWN_DEPTH);
  switch (row.kind) {
    case "run":
      return runRow(row.run, row.depth, view);
    case "model":
      return modelRow(row.model, depth, row.bar, view, tips, zoom);
    case "batch":
      return batchRow(row.batch, depth, zoom);
    case "call":
      return callRow(row.call, depth, row.bar, view, tips, zoom);
  }
}

/** A turn's zoom button: into the whole turn, or into its calls alone. */
function zoomButton(block: ZoomBlock, index: number): string {
  const calls = block.kind === "calls";
  const what = `${calls ? "the calls of " : ""}turn ${block.turn} of ${block.nested ? "child run" : "run"} ${block.runId}`;
  return `<button class="zoom" type="button" tabindex="-1" data-block="${index}" aria-label="${escapeHtml(`Zoom into ${what}`)}" title="${calls ? "Show this turn's calls alone (Z on a call)" : "Show this turn alone (Z on its model request)"}">⤢ ${calls ? "zoom calls" : "zoom"}</button>`;
}

const MARKER_ICON: Record<TimelineRun["markers"][number]["kind"], string> = {
  approval_requested: "✎",
  approval_decided: "✎",
  resumed: "↪",
  aborted: "■",
  compaction: "⇣",
};

/** Why a run that names a parent call is drawn at top level, for its header. */
const ORPHAN_TEXT: Record<NonNullable<TimelineRun["orphan"]>, string> = {
  unknown_parent: "which is not in the trace",
  own_call: "which is one of its own calls",
  cycle: "whose run is nested under this one (a cycle)",
};

function runRow(run: TimelineRun, level: number, view: View): DrawnRow {
  const depth = Math.min(level, MAX_DRAWN_DEPTH);
  const nested = depth > 0 ? " nested" : "";
  const outcome =
    run.outcome === undefined
      ? "… no end in trace"
      : run.outcome.kind === "aborted"
        ? "■ aborted"
        : run.outcome.subtype === "success"
          ? "✓ success"
          : `✗ ${run.outcome.subtype}`;
  const markers = run.markers
    .map(
      (marker) =>
        `<span class="marker" style="left:${pct(at(view, marker.time))}" title="${escapeHtml(marker.label)}">${MARKER_ICON[marker.kind]}<span class="sr">${escapeHtml(marker.label)}</span></span>`,
    )
    .join("");
  const head =
    run.orphan !== undefined
      ? `run (child of ${run.parentToolUseId ?? ""}, ${ORPHAN_TEXT[run.orphan]}: drawn at top level)`
      : level > 0
        ? `child run of ${run.parentToolUseId ?? ""}${level > MAX_DRAWN_DEPTH ? ` (level ${level})` : ""}`
        : "run";
  const marks =
    run.markers.length > 0
      ? ` · ${run.markers.map((marker) => `${MARKER_ICON[marker.kind]} ${marker.label}`).join(", ")}`
      : "";
  const tail = `${run.model ? ` · ${run.model}` : ""} · ${outcome}${marks}`;
  const left = at(view, run.startedAt);
  return {
    html: `<div class="row run-head${nested}" style="--depth:${depth}" data-run="${escapeHtml(run.runId)}"><div class="label">${escapeHtml(head)} <span class="id">${escapeHtml(run.runId)}</span>${escapeHtml(tail)}</div><div class="track"><span class="span" style="left:${pct(left)};width:${pct(at(view, run.endedAt) - left)}"></span>${markers}</div></div>`,
    // A run's header wraps rather than widening the column for every row.
    labelChars: 0,
  };
}

function modelRow(
  model: TimelineModelCall,
  depth: number,
  n: number,
  view: View,
  tips: Record<string, string>[],
  zoom: string,
): DrawnRow {
  const nested = depth > 0 ? " nested" : "";
  const parts: string[] = [];
  if (model.failure !== undefined) parts.push("✗ failed");
  else if (model.finishedAt === undefined) parts.push("… no reply in trace");
  else parts.push(formatDuration(model.finishedAt - model.startedAt));
  if (model.retries.length > 0) {
    parts.push(`↻ ${model.retries.length} retr${model.retries.length === 1 ? "y" : "ies"}`);
  }
  // A call to another model than the run's (an override, a fallback) is named.
  const name = model.model !== undefined ? `model ${model.model} ·` : "model";
  const label = `turn ${model.turn} · ${name} ${parts.join(" · ")}`;
  const status =
    model.failure !== undefined
      ? `✗ failed: ${model.failure}`
      : model.finishedAt === undefined
        ? "… no reply in trace"
        : `✓ ${model.stopReason ?? "finished"}`;
  const detail = [
    model.toolCalls !== undefined ? `${model.toolCalls} tool call(s)` : "",
    model.tokens ? `${model.tokens.input} in / ${model.tokens.output} out tokens` : "",
    ...model.retries.map(
      (retry) =>
        `↻ retry ${retry.attempt} at ${formatOffset(retry.time - view.origin)}${retry.status !== undefined ? ` (HTTP ${retry.status})` : ""}: ${retry.message}`,
    ),
  ]
    .filter((part) => part !== "")
    .join("; ");
  const duration =
    model.finishedAt === undefined ? "" : formatDuration(model.finishedAt - model.startedAt);
  tips[n] = compact({
    title: `Model request, turn ${model.turn}`,
    turn: String(model.turn),
    started: formatOffset(model.startedAt - view.origin),
    finished: model.finishedAt === undefined ? "" : formatOffset(model.finishedAt - view.origin),
    duration,
    status,
    detail,
  });
  const [left, width, ...retries] = modelGeometry(model, view.boxes[n]!, view);
  const marks = retries
    .map((position) => `<span class="retry" style="left:${pct(position)}">↻</span>`)
    .join("");
  return {
    html: `<div class="row turn-head${nested}" style="--depth:${depth}"><div class="label">${escapeHtml(label)}${zoom}</div><div class="track"><span class="bar model${model.failure !== undefined ? " failed" : ""}" ${n === 0 ? 'tabindex="0" ' : ""}data-n="${n}" role="img" aria-label="${escapeHtml(`model request turn ${model.turn}: ${status}, ${duration}`)}" style="left:${pct(left)};width:${pct(width)}"><span class="seg run" style="left:0;right:0"></span>${marks}</span></div></div>`,
    labelChars: label.length + (zoom === "" ? 0 : 8) + depth * 2,
  };
}

function batchRow(batch: TimelineBatch, depth: number, zoom: string): DrawnRow {
  const nested = depth > 0 ? " nested" : "";
  const parts: string[] = [];
  if (batch.policy !== undefined && !batch.policy.allowed) {
    parts.push(
      `⊗ batch refused by policy${batch.policy.code ? ` (${batch.policy.code})` : ""}: ${batch.policy.message ?? ""}`,
    );
  }
  if (batch.plan !== undefined && batch.plan.runs.length > 0) {
    parts.push(
      `plan (${batch.plan.mode}, cap ${batch.plan.maxConcurrency}): ${planText(batch, batch.plan.runs)}`,
    );
  }
  const ignored = batch.plan?.ignoredIndices ?? 0;
  if (ignored > 0) {
    parts.push(
      ignored === 1
        ? "⚠ the plan names 1 index that is repeated or names no call of this batch: ignored"
        : `⚠ the plan names ${ignored} indices that are repeated or name no call of this batch: ignored`,
    );
  }
  // The line has no bar: its text runs across the whole row.
  return {
    html: `<div class="row batch-head${nested}" style="--depth:${depth}"><div class="label wide">${escapeHtml(parts.join(" · "))}${zoom}</div></div>`,
    labelChars: 0,
  };
}

/** How many call names a plan's line lists before it sums up the rest. */
const PLAN_NAMES = 24;

/**
 * A plan's runs as a line: `[a ‖ b ‖ c] → [d]`, names cut to 40 characters, and at most
 * {@link PLAN_NAMES} names in all, the rest summed up (`… 96 more runs, 96 calls`).
 */
function planText(
  batch: TimelineBatch,
  runs: readonly { readonly concurrent: boolean; readonly indices: readonly number[] }[],
): string {
  const names = new Map(batch.calls.map((call) => [call.index, call.name]));
  const parts: string[] = [];
  let budget = PLAN_NAMES;
  for (let position = 0; position < runs.length; position++) {
    const run = runs[position]!;
    if (budget <= 0) {
      let calls = 0;
      for (let rest = position; rest < runs.length; rest++) calls += runs[rest]!.indices.length;
      const more = runs.length - position;
      parts.push(
        `… ${more} more run${more === 1 ? "" : "s"}, ${calls} call${calls === 1 ? "" : "s"}`,
      );
      break;
    }
    const separator = run.concurrent ? " ‖ " : " → ";
    const shown = run.indices
      .slice(0, budget)
      .map((index) => shorten(names.get(index) ?? `#${index}`, 40));
    budget -= shown.length;
    const more = run.indices.length - shown.length;
    parts.push(`[${shown.join(separator)}${more > 0 ? `${separator}… ${more} more` : ""}]`);
  }
  return parts.join(" → ");
}

function callRow(
  call: TimelineCall,
  depth: number,
  n: number,
  view: View,
  tips: Record<string, string>[],
  zoom: string,
): DrawnRow {
  const nested = depth > 0 ? " nested" : "";
  const statusKey = call.status ?? "running";
  const status = STATUS_TEXT[statusKey];
  const finished = call.finishedAt ?? call.startedAt ?? call.queuedAt;
  const ranHandler = call.startedAt !== undefined;
  const waitEnd = call.startedAt ?? finished;
  const box = view.boxes[n]!;
  const [left, width, waitWidth, runLeft, runWidth, lateLeft, lateWidth] = callGeometry(box);
  // A wait part only where the call really waited, as wide as it waited. Where the call is
  // drawn later than it started (to keep its batch's order), the bar shows a dotted line.
  const segments = [
    !ranHandler
      ? `<span class="seg wait" style="left:0;width:100%"></span>`
      : waitEnd > call.queuedAt
        ? `<span class="seg wait" style="left:0;width:${pct(waitWidth)}"></span>`
        : "",
    ranHandler
      ? `<span class="seg run" style="left:${pct(runLeft)};width:${pct(runWidth)}"></span>`
      : "",
    call.settledLateAt !== undefined
      ? `<span class="seg late" style="left:${pct(lateLeft)};width:${pct(lateWidth)}"></span>`
      : "",
  ].join("");
  const flags = [
    call.unsafe ? "⚑ unsafe" : "",
    call.waitReason !== undefined ? "‖ waited" : "",
    call.children.length > 0
      ? `↳ ${call.children.length} child run${call.children.length === 1 ? "" : "s"}`
      : "",
  ].filter((flag) => flag !== "");
  const duration = ranHandler
    ? formatDuration(finished - (call.startedAt ?? finished))
    : "did not run";
  const wait = formatDuration(waitEnd - call.queuedAt);
  tips[n] = compact({
    title: `${call.name} (${call.kind})`,
    tool: call.name,
    id: call.id,
    turn: String(call.turn),
    queued: formatOffset(call.queuedAt - view.origin),
    started:
      call.startedAt === undefined
        ? "never (no handler ran)"
        : formatOffset(call.startedAt - view.origin),
    finished:
      call.finishedAt === undefined ? "not in trace" : formatOffset(call.finishedAt - view.origin),
    wait,
    duration,
    status: `${status.icon} ${status.text}${call.isError && call.status === "completed" ? " (is_error result)" : ""}`,
    why: [call.unsafe ? "unsafe: runs alone" : "", call.waitReason ?? ""]
      .filter(Boolean)
      .join("; "),
    inflight: call.inFlight === undefined ? "" : String(call.inFlight),
    late:
      call.settledLateAt === undefined
        ? ""
        : `${formatOffset(call.settledLateAt - view.origin)} (result discarded)`,
    detail: call.progressCount > 0 ? `${call.progressCount} progress report(s)` : "",
  });
  const icon = `${status.icon}${call.waitReason !== undefined ? "‖" : ""}${call.unsafe ? "⚑" : ""}`;
  const statusText = `${status.icon} ${status.text}${flags.length > 0 ? ` · ${flags.join(" · ")}` : ""}`;
  return {
    html: `<div class="row${nested}"${depth === 0 ? "" : ` style="--depth:${depth}"`} data-call="${escapeHtml(call.id)}"><div class="label">${escapeHtml(call.name)} <span class="id">${escapeHtml(call.id)}</span> <span class="st">${escapeHtml(statusText)}</span>${zoom}</div><div class="track"><span class="bar call s-${statusKey}${ranHandler ? "" : " norun"}" ${n === 0 ? 'tabindex="0" ' : ""}data-n="${n}" role="img" aria-label="${escapeHtml(`${call.name} ${call.id}: ${status.text}, waited ${wait}, ran ${duration}`)}" style="left:${pct(left)};width:${pct(width)}">${segments}${call.status === "completed" && icon === status.icon ? "" : `<i aria-hidden="true">${icon}</i>`}</span></div></div>`,
    labelChars:
      call.name.length + call.id.length + statusText.length + 2 + (zoom === "" ? 0 : 8) + depth * 2,
  };
}

/** The summary's counts, from the rows: retries, each call status, aborted runs. */
function countStatuses(rows: readonly TimelineRow[]): string[] {
  const counts = new Map<string, [count: number, one: string, many: string]>();
  const add = (key: string, one: string, many: string, by = 1) => {
    const entry = counts.get(key);
    if (entry === undefined) counts.set(key, [by, one, many]);
    else entry[0] += by;
  };
  for (const row of rows) {
    if (row.kind === "model" && row.model.retries.length > 0) {
      add("retry", "↻ retry", "↻ retries", row.model.retries.length);
    } else if (row.kind === "call") {
      const status = STATUS_TEXT[row.call.status ?? "running"];
      const text = `${status.icon} ${status.text}`;
      add(text, text, text);
    } else if (row.kind === "run" && row.run.outcome?.kind === "aborted") {
      add("aborted", "■ aborted run", "■ aborted runs");
    }
  }
  return [...counts.values()].map(([count, one, many]) => `${count} ${count === 1 ? one : many}`);
}

/** Drops empty fields. */
function compact(data: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const key in data) {
    const value = data[key];
    if (value !== undefined && value !== "") kept[key] = value;
  }
  return kept;
}
